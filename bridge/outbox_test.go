package bridge

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

func TestStoreOutboxInOrderOnceAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	put := func(ms ...*store.Message) {
		if err := st.Append(now, ms...); err != nil {
			t.Fatal(err)
		}
	}
	put(&store.Message{Channel: "qq:group:1", Role: store.RoleAssistant, Text: "before the bridge existed"})
	o, err := NewStoreOutbox(st, "qq")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 600 { // a long stretch of other channels' messages
		put(&store.Message{Channel: "home", Role: store.RoleUser, Text: fmt.Sprint("noise ", i)})
	}
	put(&store.Message{Channel: "qq:group:1", Role: store.RoleUser, Text: "a question"},
		&store.Message{Channel: "qq:group:1", Role: store.RoleAssistant, Text: "one"},
		&store.Message{Channel: "qqx:group:1", Role: store.RoleAssistant, Text: "another bridge's"},
		&store.Message{Channel: "qq:group:1", Role: store.RoleAssistant, Empty: true},
		&store.Message{Channel: "tg:private:2", Role: store.RoleAssistant, Text: "telegram's"},
		&store.Message{Channel: "qq:private:2", Role: store.RoleAssistant, Text: "two", Proactive: true})
	ctx := context.Background()
	p, err := o.Next(ctx)
	if err != nil || p.Text != "one" {
		t.Fatalf("first = %+v %v", p, err)
	}
	if o.Pending() != 2 {
		t.Errorf("pending = %d, want 2", o.Pending())
	}
	if err := o.Done(p); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o, err = NewStoreOutbox(st, "qq")
	if err != nil {
		t.Fatal(err)
	}
	p, err = o.Next(ctx)
	if err != nil || p.Text != "two" || !p.Proactive || p.Channel != "qq:private:2" {
		t.Fatalf("after reopening: %+v %v (one was delivered, two was not)", p, err)
	}
	o.Done(p)
	wait, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if p, err := o.Next(wait); err == nil {
		t.Errorf("handed out again: %+v", p)
	}
}
