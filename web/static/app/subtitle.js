// subtitle.js — a spoken fragment as the subtitle shows it. A reply is cut
// into fragments at sentence ends, so a quotation or a bracket that spans
// two of them leaves one fragment with an opening mark and the next with a
// closing one; shown alone, each is a stray mark. At the fragment's ends a
// mark without its partner in the fragment is dropped; marks in the middle,
// and pairs that match, stay.

// pairs maps each opening mark to its closing one.
const pairs = {
  '“': '”', '‘': '’', '「': '」', '『': '』', '﹁': '﹂', '﹃': '﹄', '(': ')', '（': '）',
  '[': ']', '［': '］', '【': '】', '〔': '〕', '《': '》', '〈': '〉', '«': '»', '‹': '›', '{': '}', '｛': '｝',
};
const closers = Object.fromEntries(Object.entries(pairs).map(([o, c]) => [c, o]));
// Marks that open and close alike: stray when the fragment holds an odd number.
const symmetric = new Set(['"', '＂']);

const count = (s, ch) => s.split(ch).length - 1;

/** A fragment without the unmatched quotes and brackets at its ends. */
export function cleanFragment(text) {
  let s = String(text ?? '').trim();
  for (let changed = true; changed && s;) {
    changed = false;
    const chars = [...s];
    const first = chars[0];
    const last = chars[chars.length - 1];
    const drop = (end) => {
      s = (end === 'first' ? chars.slice(1) : chars.slice(0, -1)).join('').trim();
      changed = true;
    };
    if (first in pairs && count(s, first) > count(s, pairs[first])) drop('first');
    else if (first in closers && count(s, first) > count(s, closers[first])) drop('first');
    else if (symmetric.has(first) && count(s, first) % 2 === 1) drop('first');
    else if (last in closers && count(s, last) > count(s, closers[last])) drop('last');
    else if (last in pairs && count(s, last) > count(s, pairs[last])) drop('last');
    else if (symmetric.has(last) && count(s, last) % 2 === 1) drop('last');
  }
  return s;
}
