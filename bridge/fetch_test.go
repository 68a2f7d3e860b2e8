package bridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// pngBytes is a small PNG as http.DetectContentType knows it.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 32)...)

// counted is a test server on 127.0.0.1 that counts its requests.
type counted struct {
	*httptest.Server
	hits atomic.Int64
}

func newCounted(t *testing.T, h http.HandlerFunc) *counted {
	c := &counted{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *counted) port() string { return c.URL[strings.LastIndexByte(c.URL, ':')+1:] }

func (c *counted) addrPort() netip.AddrPort {
	return netip.MustParseAddrPort(strings.TrimPrefix(c.URL, "http://"))
}

// TestFetchPolicyRefusesWhatAChatImageMayNotBe: 30+ URLs a stranger can
// put in a group image — cyan's own API through every spelling of
// loopback, a redirect and a DNS name that lead there, link-local,
// private, CGNAT, multicast and reserved addresses, closed ports, schemes
// other than http(s) — are each refused before a byte is sent to them,
// and the stored text names the image as not fetched with nothing of the
// error in it.
func TestFetchPolicyRefusesWhatAChatImageMayNotBe(t *testing.T) {
	own := newCounted(t, func(w http.ResponseWriter, r *http.Request) { // the daemon's own API
		w.Write(pngBytes)
	})
	closed := func() string { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		return fmt.Sprint(p)
	}()
	// allowed is a server the tests may reach (a stand-in for a public
	// host): it redirects where it is asked to.
	allowed := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	trustedSrv := newCounted(t, func(w http.ResponseWriter, r *http.Request) { w.Write(pngBytes) })
	p := &FetchPolicy{
		Own:     own.Listener.Addr().String(),
		Trusted: []string{trustedSrv.Listener.Addr().String()},
		Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
			switch host {
			case "cyan.evil.example": // a name that resolves to loopback
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			case "rebind.evil.example": // public, then the metadata service
				return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
			case "lan.evil.example":
				return []netip.Addr{netip.MustParseAddr("192.168.0.10"), netip.MustParseAddr("10.1.2.3")}, nil
			case "self.evil.example":
				return []netip.Addr{netip.MustParseAddr("203.0.113.5")}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		Local: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("203.0.113.5")} },
		Allow: func(ap netip.AddrPort) bool { return ap == allowed.addrPort() },
	}
	redirect := func(to string) string { return allowed.URL + "/r?to=" + url.QueryEscape(to) }
	port := own.port()
	urls := []struct{ name, url string }{
		{"own API via 127.0.0.1", "http://127.0.0.1:" + port + "/api/v1/export"},
		{"own API via localhost", "http://localhost:" + port + "/api/v1/export"},
		{"own API via [::1]", "http://[::1]:" + port + "/api/v1/export"},
		{"own API via 0.0.0.0", "http://0.0.0.0:" + port + "/api/v1/stream"},
		{"own API via decimal", "http://2130706433:" + port + "/api/v1/export"},
		{"own API via octal", "http://0177.0.0.1:" + port + "/api/v1/export"},
		{"own API via hex", "http://0x7f.0.0.1:" + port + "/api/v1/export"},
		{"own API via hex whole", "http://0x7f000001:" + port + "/api/v1/export"},
		{"own API via short form", "http://127.1:" + port + "/api/v1/export"},
		{"own API via 127.0.0.2", "http://127.0.0.2:" + port + "/api/v1/export"},
		{"IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]:" + port + "/api/v1/export"},
		{"IPv4-mapped IPv6 in hex", "http://[::ffff:7f00:1]:" + port + "/api/v1/export"},
		{"NAT64 of loopback", "http://[64:ff9b::7f00:1]:" + port + "/"},
		{"6to4 of loopback", "http://[2002:7f00:1::1]:" + port + "/"},
		{"redirect to loopback", redirect("http://127.0.0.1:" + port + "/api/v1/export")},
		{"redirect to localhost", redirect("http://localhost:" + port + "/api/v1/persona/avatar/a.png")},
		{"redirect to file", redirect("file:///etc/passwd")},
		{"redirect into a trusted origin", redirect(trustedSrv.URL + "/a.png")},
		{"DNS name of loopback", "http://cyan.evil.example:" + port + "/api/v1/export"},
		{"DNS name of the metadata service", "http://rebind.evil.example/latest/meta-data/"},
		{"DNS name of the LAN", "http://lan.evil.example/"},
		{"DNS name of this machine", "http://self.evil.example:8080/"},
		{"this machine's public address", "http://203.0.113.5:" + port + "/"},
		{"link-local metadata", "http://169.254.169.254/latest/meta-data/"},
		{"link-local IPv6", "http://[fe80::1]/"},
		{"private 10/8", "http://10.0.0.1/"},
		{"private 172.16/12", "http://172.16.0.1/"},
		{"private 172.31", "http://172.31.255.254/"},
		{"private 192.168/16", "http://192.168.1.1/"},
		{"ULA fc00::/7", "http://[fc00::1]/"},
		{"ULA fd00::", "http://[fd12:3456::1]/"},
		{"CGNAT 100.64/10", "http://100.64.0.1/"},
		{"CGNAT top", "http://100.127.255.254/"},
		{"multicast", "http://224.0.0.1/"},
		{"multicast IPv6", "http://[ff02::1]/"},
		{"broadcast", "http://255.255.255.255/"},
		{"this network 0/8", "http://0.1.2.3/"},
		{"unspecified IPv6", "http://[::]:" + port + "/"},
		{"closed port", "http://127.0.0.1:" + closed + "/"},
		{"closed port by name", "http://localhost:" + closed + "/"},
		{"closed port by a name of loopback", "http://cyan.evil.example:" + closed + "/"},
		{"localhost with a trailing dot", "http://localhost.:" + port + "/"},
		{"a name under localhost", "http://api.localhost:" + port + "/"},
		{"file", "file:///etc/passwd"},
		{"gopher", "gopher://127.0.0.1:" + port + "/_GET%20/api/v1/export"},
		{"data", "data:image/png;base64,iVBORw0KGgo="},
		{"ftp", "ftp://10.0.0.1/a.png"},
		{"user and password", "http://user:pass@203.0.113.9/"},
		{"bad port", "http://203.0.113.9:99999/"},
		{"no host", "http:///a.png"},
	}
	client := p.Client()
	dir := t.TempDir()
	k := newImageKeeper(dir, "qq", 1<<20, 1<<30)
	for _, tc := range urls {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Fetch(context.Background(), client, tc.url, 1<<20)
			if !errors.Is(err, ErrRefusedAddress) {
				t.Fatalf("%s: %v, want refused", tc.url, err)
			}
			u := tc.url
			part := Part{Kind: PartImage, Media: &Media{Name: "x.jpg", Fetch: func(ctx context.Context, max int64) ([]byte, error) {
				return p.Fetch(ctx, client, u, max)
			}}}
			if got := imageText(part, k.keep(context.Background(), grp, part.Media)); got != "[image x.jpg: not fetched]" {
				t.Errorf("stored %q", got)
			}
		})
	}
	if n := own.hits.Load(); n != 0 {
		t.Errorf("the daemon's own API got %d requests", n)
	}
	if n := trustedSrv.hits.Load(); n != 0 {
		t.Errorf("the trusted origin got %d requests through redirects", n)
	}
}

// The zero FetchPolicy — the daemon's, with no test hook — refuses a
// server on loopback, where the tests' own servers are.
func TestProductionFetchPolicyRefusesLoopback(t *testing.T) {
	srv := newCounted(t, func(w http.ResponseWriter, r *http.Request) { w.Write(pngBytes) })
	p := &FetchPolicy{}
	for _, u := range []string{srv.URL + "/a.png", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/a.png"} {
		if _, err := p.Fetch(context.Background(), nil, u, 0); !errors.Is(err, ErrRefusedAddress) {
			t.Errorf("%s: %v, want refused", u, err)
		}
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests", n)
	}
}

// What the policy allows is fetched: a server the test admits, a trusted
// origin on loopback (the implementation's own file server) and a
// redirect within it.
func TestFetchPolicyFetchesWhatItAllows(t *testing.T) {
	img := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/r" {
			http.Redirect(w, r, "/a.png", http.StatusFound)
			return
		}
		w.Write(pngBytes)
	})
	for _, tc := range []struct {
		name string
		p    *FetchPolicy
		url  string
	}{
		{"allowed by the test hook", &FetchPolicy{Allow: func(ap netip.AddrPort) bool { return ap == img.addrPort() }}, img.URL + "/a.png"},
		{"trusted origin", &FetchPolicy{Trusted: []string{img.Listener.Addr().String()}}, img.URL + "/a.png"},
		{"trusted origin as a ws URL", &FetchPolicy{Trusted: []string{"ws://" + img.Listener.Addr().String() + "/"}}, img.URL + "/a.png"},
		{"redirect within the trusted origin", &FetchPolicy{Trusted: []string{img.URL}}, img.URL + "/r"},
		{"trusted origin written as localhost", &FetchPolicy{Trusted: []string{"localhost:" + img.port()}}, "http://localhost:" + img.port() + "/a.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.p.Fetch(context.Background(), nil, tc.url, 1<<20)
			if err != nil || string(b) != string(pngBytes) {
				t.Fatalf("%s: %q %v", tc.url, b, err)
			}
		})
	}
	// A trusted origin never makes the daemon's own address fetchable.
	p := &FetchPolicy{Trusted: []string{img.Listener.Addr().String()}, Own: img.Listener.Addr().String()}
	if _, err := p.Fetch(context.Background(), nil, img.URL+"/a.png", 0); !errors.Is(err, ErrRefusedAddress) {
		t.Errorf("the daemon's own address, trusted: %v", err)
	}
}

// A stranger's image at the daemon's own API, through a bridge: the
// message is stored, its image named as not fetched, with no error, port
// or address in the text, and the API is never asked.
func TestAStrangersImageAtTheOwnAPIIsNotFetched(t *testing.T) {
	own := newCounted(t, func(w http.ResponseWriter, r *http.Request) { w.Write(pngBytes) })
	p := &FetchPolicy{Own: own.Listener.Addr().String()}
	client := p.Client()
	r := newRig(t, func(o *Options) { o.DataDir = t.TempDir() })
	defer r.stop()
	u := own.URL + "/api/v1/export"
	r.say(grp, alice, text("look"), Part{Kind: PartImage, Media: &Media{Name: "export.jpg", Fetch: func(ctx context.Context, max int64) ([]byte, error) {
		return p.Fetch(ctx, client, u, max)
	}}})
	stored, _, _ := r.agent.snapshot()
	if len(stored) != 1 || stored[0].Text != "look [image export.jpg: not fetched]" {
		t.Fatalf("stored %v", stored)
	}
	if own.hits.Load() != 0 {
		t.Error("the own API was asked")
	}
}

func FuzzCheckMediaURL(f *testing.F) {
	for _, s := range []string{"http://2130706433/", "https://gchat.qpic.cn/gchatpic_new/1/2-3-ABC/0", "http://[::ffff:127.0.0.1]:80/",
		"http://0x7f.1/", "file:///etc/passwd", "http://a.b.c.0x1g/", "HTTP://EXAMPLE.COM./x", "http://[fe80::1%25eth0]/", "http://u:p@h/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := CheckMediaURL(raw)
		if err != nil {
			if !errors.Is(err, ErrRefusedAddress) {
				t.Fatalf("%q: %v is not a refusal", raw, err)
			}
			return
		}
		if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			t.Fatalf("%q: scheme %q accepted", raw, u.Scheme)
		}
		host := u.Hostname()
		if host == "" || u.User != nil {
			t.Fatalf("%q: host %q, user %v accepted", raw, host, u.User)
		}
		if _, err := netip.ParseAddr(host); err != nil && endsInNumber(host) {
			t.Fatalf("%q: numeric host %q accepted", raw, host)
		}
		if o := origin(u); o == "" || !strings.Contains(o, ":") {
			t.Fatalf("%q: origin %q", raw, o)
		}
	})
}
