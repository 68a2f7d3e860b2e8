// Package notation is the text convention between the platform and the
// model (SPEC §2): "^name [time]: text" lines for what people and the
// platform say (the owner's marked by id, "^晴 (owner) [time]: text":
// OwnerLine; no one else's name can carry the mark), "#function result" lines for tool results, "@br" and
// "<empty_reply>" in the model's output. Escape makes untrusted text (from
// users, files, tools or memory) unable to forge any of them; every package
// that renders such text into a prompt uses it. FoldWidth is the one
// full-width fold, by which recall's terms and memory's facts compare
// full-width and half-width text as the same.
//
// It imports nothing of cyan's.
package notation
