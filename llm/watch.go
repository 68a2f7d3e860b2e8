package llm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Watched is a Client that remembers whether its last call reached a
// model that answered, for /healthz: a call that failed because the
// endpoint is unreachable, timed out, refused the key, lacks the model,
// is out of quota or is misconfigured marks it down until a call
// succeeds. Other failures (a bad request, a rate limit, a server error)
// say nothing about reachability and leave the mark as it is.
type Watched struct {
	Client
	now func() time.Time

	mu   sync.Mutex
	down *Down
}

// Down is the failure that marked the model unreachable.
type Down struct {
	Kind Kind
	At   time.Time
}

func (d *Down) String() string {
	what := map[Kind]string{
		Unreachable:   "could not be reached",
		Timeout:       "did not answer in time",
		Auth:          "refused the API key",
		ModelNotFound: "does not serve the configured model",
		Quota:         "is out of quota",
		Config:        "is not configured well enough to call",
	}[d.Kind]
	return fmt.Sprintf("the model %s at its last call (%s); cyan doctor checks the connection", what, d.At.UTC().Format(time.RFC3339))
}

// Watch wraps c; now is the clock (nil: time.Now).
func Watch(c Client, now func() time.Time) *Watched {
	if now == nil {
		now = time.Now
	}
	return &Watched{Client: c, now: now}
}

// Unwrap is the watched client.
func (w *Watched) Unwrap() Client { return w.Client }

// Down is the failure that marked the model unreachable; nil while the
// last call that says anything about it succeeded.
func (w *Watched) Down() *Down {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.down
}

func (w *Watched) note(err error) {
	var e *Error
	switch {
	case err == nil:
		w.mu.Lock()
		w.down = nil
		w.mu.Unlock()
	case errors.As(err, &e):
		switch e.Kind {
		case Unreachable, Timeout, Auth, ModelNotFound, Quota, Config:
			w.mu.Lock()
			w.down = &Down{Kind: e.Kind, At: w.now()}
			w.mu.Unlock()
		}
	}
}

func (w *Watched) Chat(ctx context.Context, req Request) (*Response, error) {
	resp, err := w.Client.Chat(ctx, req)
	w.note(err)
	return resp, err
}

func (w *Watched) Stream(ctx context.Context, req Request, onDelta func(Delta) error) (*Response, error) {
	resp, err := w.Client.Stream(ctx, req, onDelta)
	w.note(err)
	return resp, err
}

func (w *Watched) Models(ctx context.Context) ([]string, error) {
	models, err := w.Client.Models(ctx)
	w.note(err)
	return models, err
}

var _ Client = (*Watched)(nil)
