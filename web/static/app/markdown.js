// markdown.js — the little markdown a character's reply holds, rendered
// safely: the text is escaped first, then fenced code blocks, inline code,
// **strong**, *emphasis* and _emphasis_ (a role-play *action* is emphasis,
// shown in italics) become elements. Links and images are shown as text;
// nothing from the reply becomes markup of its own.

const esc = (s) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

/** Inline markup of escaped text that holds no code. */
function inline(s) {
  return s
    .replace(/\*\*([^*\n]+?)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*\w])\*([^*\n]+?)\*(?!\w)/g, '$1<em class="action">$2</em>')
    .replace(/(^|[^_\w])_([^_\n]+?)_(?!\w)/g, '$1<em>$2</em>');
}

/** Text outside code: inline code spans, then the rest. */
function spans(s) {
  const out = [];
  const re = /`([^`\n]+)`/g;
  let last = 0;
  for (let m; (m = re.exec(s));) {
    out.push(inline(esc(s.slice(last, m.index))), '<code>' + esc(m[1]) + '</code>');
    last = re.lastIndex;
  }
  out.push(inline(esc(s.slice(last))));
  return out.join('');
}

/**
 * Renders a reply's text as HTML. An unclosed fence (a reply still
 * streaming) is shown as code up to the end.
 */
export function render(text) {
  const out = [];
  const re = /```([\w+-]*)[^\n]*\n?([\s\S]*?)(?:```|$)/g;
  let last = 0;
  for (let m; (m = re.exec(text));) {
    if (m[0] === '') { re.lastIndex++; continue; }
    out.push(spans(text.slice(last, m.index)));
    const lang = m[1] ? ` data-lang="${esc(m[1])}"` : '';
    out.push(`<pre${lang}><code>${esc(m[2].replace(/\n$/, ''))}</code></pre>`);
    last = re.lastIndex;
  }
  out.push(spans(text.slice(last)));
  return out.join('');
}
