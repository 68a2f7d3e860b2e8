package packets

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func FuzzDecodeNatural(f *testing.F) {
	f.Add([]byte(`{"aim":"a","scene":"s","appendix":["x"],"output_text_limit":3,"output_file_limit":["a"]}`))
	f.Add([]byte(`{"aim":["a"]}`))
	f.Add([]byte(`{"aim":"a","output_text_limit":-1} x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := DecodeNatural(b)
		if err != nil {
			return
		}
		if n.Aim == "" || n.OutputTextLimit < -1 || len(n.OutputFileLimit) > MaxFiles {
			t.Fatalf("accepted a bad packet: %+v", n)
		}
		enc, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeNatural(enc); err != nil {
			t.Fatalf("re-decode of %s: %v", enc, err)
		}
		r := n.Clip(Result{OutputText: string(b), OutputFile: n.Appendix})
		if utf8.RuneCountInString(r.OutputText) > n.TextLimit() || !utf8.ValidString(r.OutputText) {
			t.Fatalf("clip over limit: %d > %d", utf8.RuneCountInString(r.OutputText), n.TextLimit())
		}
		if len(n.OutputFileLimit) > 0 && len(r.OutputFile) != len(n.OutputFileLimit) {
			t.Fatal("file order not kept")
		}
	})
}

func FuzzPermission(f *testing.F) {
	f.Add([]byte(`{"tools":["!delete_*","w*",{"read_file":{"action":"confirm","parameters":{"path":["!/x/*","/y/**"]}}}],"defaultAction":"deny"}`), "read_file", "/y/a")
	f.Add([]byte(`{"tools":["@read",{"name":"t*","action":"deny"}]}`), "terminal", "ls")
	f.Add([]byte(`{"tools":[{"x":null}],"infos":["!a"]}`), "x", "")
	f.Fuzz(func(t *testing.T, b []byte, tool, value string) {
		var p Permission
		if err := json.Unmarshal(b, &p); err != nil {
			return
		}
		enc, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back Permission
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("re-parse of %s: %v", enc, err)
		}
		s := Subject{Tool: tool, Effects: []string{"read"}, Values: func(string) []string { return []string{value} }}
		v1, v2 := p.Check(s), back.Check(s)
		if v1 != v2 {
			t.Fatalf("verdict changed by a round trip: %v vs %v", v1, v2)
		}
		switch v1.Decision {
		case Allow, Deny, Confirm:
		default:
			t.Fatalf("decision %q", v1.Decision)
		}
		for _, r := range p.Tools {
			if !r.Object && r.Negate && s.matches(r.Pattern) && v1.Decision != Deny {
				t.Fatalf("negation %q did not win: %v", r.Pattern, v1)
			}
		}
	})
}
