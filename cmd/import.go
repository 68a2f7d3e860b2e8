package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/importer"
	"github.com/cyan-agent/cyan/store"
)

// Import batches: at most this many messages or bytes per request.
const (
	importBatchMessages = 2000
	importBatchBytes    = 512 << 10
)

func runImport(io IO, args []string) error {
	fs := newFlags(io, "import")
	format := fs.String("format", "", "`jsonl` (one {\"time\", \"channel\", \"user\", \"role\"?, \"text\", \"id\"?} per line), locomo, or cyan (an export of cyan export; default: by the file's start)")
	channel := fs.String("channel", "", "put every message into this `channel` (locomo: default is each conversation's sample_id)")
	retryFor := fs.Duration("retry-for", defaultImportRetry, "how long to keep sending a batch to a daemon that stopped answering")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{msg: "name one file; try: cyan import history.jsonl"}
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return fmt.Errorf("%w (check the path)", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	if *format == "" {
		*format = "jsonl"
		if b, err := br.Peek(64); err == nil || len(b) > 0 {
			if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '[' {
				*format = "locomo"
			}
		}
		if isExport(br) {
			*format = "cyan"
		}
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	if *format == "cyan" {
		return importExport(io, cfg, br)
	}
	imp := &importRun{c: newClient(cfg), channel: *channel, out: io.Stderr, began: time.Now(), retryFor: *retryFor}
	if st, err := f.Stat(); err == nil {
		imp.size = st.Size()
	}
	switch *format {
	case "jsonl":
		err = imp.jsonl(br)
	case "locomo":
		err = imp.locomo(br)
	default:
		return &usageError{msg: fmt.Sprintf("--format %q is not jsonl or locomo", *format)}
	}
	imp.progress(true)
	if err != nil {
		return importError(err, imp.added+imp.skipped)
	}
	fmt.Fprintf(io.Stdout, "imported %d messages (%d were already there) in %s\n", imp.added, imp.skipped, time.Since(imp.began).Round(time.Millisecond))
	return nil
}

// importRun sends batches to the daemon and draws a progress line.
type importRun struct {
	c        *client
	channel  string
	out      io.Writer
	began    time.Time
	size     int64 // file bytes, for jsonl progress
	read     int64
	total    int // messages, for locomo progress
	added    int
	skipped  int
	lastDraw time.Time
	retryFor time.Duration
}

func (r *importRun) send(batch []importer.Line, final bool) error {
	var ans struct {
		Added   int `json:"added"`
		Skipped int `json:"skipped"`
	}
	body := map[string]any{"messages": batch, "channel": r.channel, "final": final}
	if err := r.sendOnce(body, &ans); err != nil {
		return err
	}
	r.added += ans.Added
	r.skipped += ans.Skipped
	r.progress(false)
	return nil
}

func (r *importRun) progress(done bool) {
	if !done && time.Since(r.lastDraw) < 200*time.Millisecond {
		return
	}
	r.lastDraw = time.Now()
	n := r.added + r.skipped
	frac := 0.0
	switch {
	case r.total > 0:
		frac = float64(n) / float64(r.total)
	case r.size > 0:
		frac = float64(r.read) / float64(r.size)
	}
	if done {
		frac = 1
	}
	const width = 30
	bar := strings.Repeat("█", int(frac*width)) + strings.Repeat("░", width-int(frac*width))
	rate := float64(n) / max(time.Since(r.began).Seconds(), 1e-3)
	fmt.Fprintf(r.out, "\r%s %3.0f%%  %d messages  %.0f/s ", bar, frac*100, n, rate)
	if done {
		fmt.Fprintln(r.out)
	}
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
			return err
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
		return err
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
