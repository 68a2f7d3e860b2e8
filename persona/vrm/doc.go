// Package vrm reads what cyan needs to know of a VRM model (the persona
// folder's avatar.vrm, or a file given to cyan persona import --avatar):
// that it is a glTF 2.0 binary whose JSON chunk uses the VRM 0.x ("VRM")
// or VRM 1.0 ("VRMC_vrm") extension, its version, title and expressions.
// It reads the JSON chunk only; the page's three-vrm loads the model.
//
// It imports nothing of cyan's.
package vrm
