package recall

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A message its sender withdrew (marked recalled after it was indexed)
// never comes back in a result; its neighbours still do.
func TestRecalledMessagesAreNeverRecalled(t *testing.T) {
	x, st := newTestIndex(t, Options{})
	fillHistory(t, st)
	syncIndex(t, x)
	if _, err := st.MarkRecalled("qq:group:42", "h10", time.Now()); err != nil {
		t.Fatal(err)
	}
	r, err := x.Search(context.Background(), Query{Prompt: "exam schedule notice board", Channel: "qq:group:42", MaxResults: 3, Window: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) == 0 {
		t.Fatal("no results at all")
	}
	for _, res := range r.Results {
		if strings.Contains(res.Text, "notice board") {
			t.Errorf("the recalled message came back: %q", res.Text)
		}
		for _, id := range res.ExternalIDs {
			if id == "h10" {
				t.Errorf("the recalled message's id came back: %v", res.ExternalIDs)
			}
		}
	}
}
