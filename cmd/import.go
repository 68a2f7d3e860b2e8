package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cyan-agent/cyan/importer"
	"github.com/cyan-agent/cyan/store"
)

// Import batches: at most this many messages or bytes per request.
const (
	importBatchMessages = 2000
	importBatchBytes    = 512 << 10
)

func importCmd(f *flags) run {
	format := f.String("format", "", "the file's `format`: jsonl (one {\"time\", \"channel\", \"user\", \"role\"?, \"text\", \"id\"?} per line) or locomo (default: by the file's first character)")
	channel := f.String("channel", "", "put every message into this `channel` (locomo: default is each conversation's sample_id)")
	asJSON := f.json()
	return func(io IO, pos []string) error {
		if *format != "" && *format != "jsonl" && *format != "locomo" {
			return &usageError{msg: fmt.Sprintf("--format %q is not jsonl or locomo", *format)}
		}
		file, err := os.Open(pos[0])
		if err != nil {
			return badInput("%w (check the path)", err)
		}
		defer file.Close()
		br := bufio.NewReaderSize(file, 1<<20)
		kind := *format
		if kind == "" {
			kind = "jsonl"
			if b, err := br.Peek(64); err == nil || len(b) > 0 {
				if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '[' {
					kind = "locomo"
				}
			}
		}
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		imp := &importRun{c: c, channel: *channel, bar: newProgress(io.Stderr, "import")}
		if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
			imp.size = st.Size()
		}
		if kind == "jsonl" {
			err = imp.jsonl(br)
		} else {
			err = imp.locomo(br)
		}
		if err != nil {
			if imp.added+imp.skipped > 0 {
				imp.show(true, false)
				return fmt.Errorf("%w\n%d messages before it were imported; fix the file and run the same command again (nothing is imported twice)", err, imp.added+imp.skipped)
			}
			return err
		}
		imp.show(true, true)
		took := time.Since(imp.bar.began)
		if *asJSON {
			return printJSON(io.Stdout, map[string]any{"file": pos[0], "format": kind, "added": imp.added, "skipped": imp.skipped, "millis": took.Milliseconds()})
		}
		fmt.Fprintf(io.Stdout, "imported %d messages (%d were already there) in %s\n", imp.added, imp.skipped, took.Round(time.Millisecond))
		return nil
	}
}

// importRun sends batches to the daemon and shows the progress.
type importRun struct {
	c       *client
	channel string
	bar     *progress
	size    int64 // file bytes, for jsonl progress
	read    int64
	total   int // messages, for locomo progress
	added   int
	skipped int
}

func (r *importRun) send(batch []importer.Line, final bool) error {
	var ans struct {
		Added   int `json:"added"`
		Skipped int `json:"skipped"`
	}
	if err := r.c.do("POST", "/api/v1/import", map[string]any{"messages": batch, "channel": r.channel, "final": final}, &ans); err != nil {
		return err
	}
	r.added += ans.Added
	r.skipped += ans.Skipped
	r.show(false, false)
	return nil
}

// show draws the progress; done is the last call, complete when the whole
// file is in.
func (r *importRun) show(done, complete bool) {
	n := r.added + r.skipped
	frac := 0.0
	switch {
	case complete:
		frac = 1
	case r.total > 0:
		frac = float64(n) / float64(r.total)
	case r.size > 0:
		frac = float64(r.read) / float64(r.size)
	}
	r.bar.show(frac, n, done)
}

func (r *importRun) jsonl(rd io.Reader) error {
	counted := &countingReader{r: rd, n: &r.read}
	j := importer.NewJSONL(counted, r.channel)
	var batch []importer.Line
	bytesIn := 0
	for {
		m, err := j.Next()
		if errors.Is(err, io.EOF) {
			return r.send(batch, true)
		}
		if err != nil {
			if len(batch) > 0 {
				if serr := r.send(batch, false); serr != nil {
					return serr
				}
			}
			return &inputError{err}
		}
		l := importer.LineOf(m)
		batch = append(batch, l)
		bytesIn += len(l.Text) + 128
		if len(batch) >= importBatchMessages || bytesIn >= importBatchBytes {
			if err := r.send(batch, false); err != nil {
				return fmt.Errorf("near line %d: %w", j.Line(), err)
			}
			batch, bytesIn = batch[:0], 0
		}
	}
}

func (r *importRun) locomo(rd io.Reader) error {
	data, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	convs, err := importer.ParseLoCoMo(data, r.channel)
	if err != nil {
		return &inputError{err}
	}
	var all []*store.Message
	for _, c := range convs {
		all = append(all, c.Messages...)
	}
	r.total = len(all)
	for i := 0; i < len(all); i += importBatchMessages {
		part := all[i:min(i+importBatchMessages, len(all))]
		batch := make([]importer.Line, len(part))
		for j, m := range part {
			batch[j] = importer.LineOf(m)
		}
		if err := r.send(batch, i+importBatchMessages >= len(all)); err != nil {
			return err
		}
	}
	if len(all) == 0 {
		return r.send(nil, true)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}
