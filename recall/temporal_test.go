package recall

import (
	"testing"
	"time"
)

func TestTemporalSignals(t *testing.T) {
	when := []struct {
		q    string
		want bool
	}{
		{"When did Caroline go to the LGBTQ support group?", true},
		{"What year did John start surfing?", true},
		{"How long ago was Caroline's 18th birthday?", true},
		{"你们什么时候去的公园？", true},
		{"試験はいつですか", true},
		{"What did Melanie paint?", false},
		{"Whenever she could, what did she bake?", false},
	}
	for _, c := range when {
		if got := whenQuestion(c.q); got != c.want {
			t.Errorf("whenQuestion(%q) = %v", c.q, got)
		}
	}
	states := []struct {
		text string
		want bool
	}{
		{"I went to a support group yesterday", true},
		{"We moved here in 2019", true},
		{"This week was rough", true},
		{"A few days ago I signed up", true},
		{"It was on May 3 I think", true},
		{"I'll see you in May", true},
		{"I just got a new puppy!", true},
		{"我昨天去了公园", true},
		{"I may paint the fence", false},
		{"Painting calms me down", false},
	}
	for _, c := range states {
		if got := statesTime(c.text); got != c.want {
			t.Errorf("statesTime(%q) = %v", c.text, got)
		}
	}
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	dates := []struct {
		q        string
		from, to time.Time
	}{
		{"What movie did Joanna watch on 1 May, 2022?", day(2022, 5, 1), day(2022, 5, 2)},
		{"what happened on May 1st, 2022", day(2022, 5, 1), day(2022, 5, 2)},
		{"Where did Joanna travel to in July 2022?", day(2022, 7, 1), day(2022, 8, 1)},
		{"What state did Joanna visit in summer 2021?", day(2021, 6, 1), day(2021, 9, 1)},
		{"What did they do in 2020?", day(2020, 1, 1), day(2021, 1, 1)},
		{"2023-08-23 plans", day(2023, 8, 23), day(2023, 8, 24)},
		{"2024年3月的考试", day(2024, 3, 1), day(2024, 4, 1)},
	}
	for _, c := range dates {
		from, to, ok := questionDates(c.q)
		if !ok || !from.Equal(c.from) || !to.Equal(c.to) {
			t.Errorf("questionDates(%q) = %v, %v, %v; want %v – %v", c.q, from, to, ok, c.from, c.to)
		}
	}
	if _, _, ok := questionDates("What did Melanie paint recently?"); ok {
		t.Error("a question without a date has a span")
	}
}
