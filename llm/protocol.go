package llm

import (
	"context"
	"io"
	"net/http"
)

// protocol is what differs between two wire protocols; client does the rest
// (models, retries, timeouts and errors live in conn).
type protocol interface {
	chatPath() string
	modelsPath() string
	setHeaders(h http.Header)
	encode(req Request, model string, stream bool) ([]byte, error)
	decode(body []byte, model string) (*Response, error)
	readStream(r io.Reader, model string, emit func(Delta) error) (*Response, error)
	// ignored lists the hints of req this protocol drops or changes.
	ignored(req Request) []string
}

// client is a Client over one protocol.
type client struct {
	c *conn
	p protocol
}

var _ Client = (*client)(nil)

// Describe names the provider, endpoint and default model.
func (cl *client) Describe() string { return cl.c.describe() }

// Chat runs one call and returns the whole response.
func (cl *client) Chat(ctx context.Context, req Request) (*Response, error) {
	model, err := cl.c.pickModel(req.Model)
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		sent := cl.c.thinkOffNow()
		body, err := cl.p.encode(req, model, false)
		if err != nil {
			return nil, err
		}
		var resp *Response
		x := exchange{method: http.MethodPost, path: cl.p.chatPath(), model: model, body: body}
		err = cl.c.call(ctx, x, func(b []byte) error {
			var err error
			resp, err = cl.p.decode(b, model)
			return err
		})
		if err != nil {
			if try == 0 && cl.c.refusedThinkOff(err, req, sent) {
				continue
			}
			return nil, err
		}
		return resp, nil
	}
}

// Stream runs one call with streaming.
func (cl *client) Stream(ctx context.Context, req Request, onDelta func(Delta) error) (*Response, error) {
	model, err := cl.c.pickModel(req.Model)
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		sent := cl.c.thinkOffNow()
		body, err := cl.p.encode(req, model, true)
		if err != nil {
			return nil, err
		}
		x := exchange{method: http.MethodPost, path: cl.p.chatPath(), model: model, body: body, stream: true}
		resp, err := cl.c.stream(ctx, x,
			func(r io.Reader, emit func(Delta) error) (*Response, error) { return cl.p.readStream(r, model, emit) },
			func(b []byte) (*Response, error) { return cl.p.decode(b, model) },
			onDelta)
		if err != nil && try == 0 && cl.c.refusedThinkOff(err, req, sent) {
			continue
		}
		return resp, err
	}
}

// Models lists the models the endpoint offers.
func (cl *client) Models(ctx context.Context) ([]string, error) {
	return listModels(ctx, cl.c, cl.p.modelsPath())
}
