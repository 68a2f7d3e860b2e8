package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrRefusedAddress: a media URL names, or leads to, an address a chat's
// media may not come from (FetchPolicy). The error goes to the log only;
// the stored message says the image was not fetched, nothing more.
var ErrRefusedAddress = errors.New("refused address")

// FetchPolicy decides where the media an incoming message names may be
// downloaded from, and downloads it (Fetch).
//
// A URL in a platform event is the sender's to choose: a stranger in a
// group can make it point at cyan's own API on loopback, at a cloud's
// metadata service, at a router on the LAN or at a closed port (a port
// scanner whose answers would be stored in the group). So, decided once:
//
//   - Only http and https URLs are fetched, with a host written as a name
//     or as a standard IP address (an IPv4 address in a form some
//     resolvers read, such as "2130706433", "0x7f.1", "0177.0.0.1" or
//     "127.1", is refused; so is "localhost", always loopback), and with
//     no user:password part.
//   - Every address the download connects to is checked when it is dialed
//     (a net.Dialer Control hook: after DNS resolution, so a name that
//     resolves to — or is rebound to — a refused address is refused too),
//     for the first request and for each redirect (at most 5, each again
//     http or https). No proxy is used: the address dialed is the one
//     checked.
//   - Refused addresses: loopback (127/8, ::1), unspecified (0.0.0.0,
//     ::), "this network" 0/8, link-local (169.254/16 — the metadata
//     service — and fe80::/10), private (10/8, 172.16/12, 192.168/16,
//     fc00::/7), shared CGNAT space 100.64/10, multicast, broadcast and
//     the reserved 240/4, the IETF and benchmarking blocks (192.0.0/24,
//     198.18/15), site-local fec0::/10; IPv4 addresses inside IPv6
//     (::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by
//     the IPv4 address they carry. The machine's own addresses and the
//     daemon's own listen address (Own) are refused at any port.
//   - Trusted origins: a OneBot implementation (NapCat, LLOneBot,
//     Lagrange) may serve images from its own HTTP server on loopback or
//     the LAN. A URL whose host:port is one of Trusted — the origins the
//     owner configured for that implementation (its forward-mode URL's
//     host:port, and bridges.onebot[].media_origins) — may reach a
//     loopback or private address, exactly as named in the event. A
//     redirect into a trusted origin from anywhere else is refused, and
//     the daemon's own listen address is never trusted. Inline data the
//     implementation itself puts in an event (OneBot "base64://") needs no
//     network and is not decided here; a "file://" path is never read.
//
// The zero FetchPolicy is the production policy with no trusted origin.
// Allow is for tests only: the daemon never sets it.
type FetchPolicy struct {
	// Trusted are origins ("host:port", a name or an IP address; the
	// scheme's port when none is given) whose URLs may reach loopback and
	// private addresses.
	Trusted []string
	// Own is the daemon's listen address ("host:port"): never fetched.
	Own string
	// Lookup resolves a host name to its addresses (nil: the system's
	// resolver, through the dialer). Whatever it returns is checked again
	// when dialed.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Local lists the machine's own addresses (nil: its interfaces').
	Local func() []netip.Addr
	// Allow admits an address the policy would refuse. Tests set it to
	// reach their own servers on 127.0.0.1; the daemon never does.
	Allow func(netip.AddrPort) bool
	// Timeout bounds one download, redirects included (0: 30 s).
	Timeout time.Duration
}

// trustKey is the request context key that carries the origin a request
// may reach even on a loopback or private address.
type trustKey struct{}

// Client is an http.Client that dials only what the policy allows.
func (p *FetchPolicy) Client() *http.Client {
	t := &http.Transport{
		Proxy:                 nil, // a proxy would hide the address from the check
		DialContext:           p.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &http.Client{Transport: t, Timeout: timeout, CheckRedirect: p.redirect}
}

// Fetch downloads url, at most max bytes (0: 32 MiB). Its errors are for
// the log, never for the stored text.
func (p *FetchPolicy) Fetch(ctx context.Context, client *http.Client, rawURL string, max int64) ([]byte, error) {
	u, err := checkURL(rawURL)
	if err != nil {
		return nil, err
	}
	if o := origin(u); p.trusted(o) {
		ctx = context.WithValue(ctx, trustKey{}, o)
	} else if err := checkName(u); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if client == nil {
		client = p.Client()
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if max <= 0 {
		max = 32 << 20
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("over %d bytes", max)
	}
	return b, nil
}

// CheckMediaURL parses a media URL and refuses what is never fetched
// outside a trusted origin: a scheme other than http and https, no host,
// a user:password part, a bad port, a host written as an IPv4 address in
// a non-standard form, or "localhost".
func CheckMediaURL(raw string) (*url.URL, error) {
	u, err := checkURL(raw)
	if err != nil {
		return nil, err
	}
	if err := checkName(u); err != nil {
		return nil, err
	}
	return u, nil
}

// checkName refuses "localhost" and the names under it, always loopback
// (RFC 6761): a trusted origin may be written so, nothing else.
func checkName(u *url.URL) error {
	if h := strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("%w: %q is always loopback", ErrRefusedAddress, u.Hostname())
	}
	return nil
}

// checkURL is CheckMediaURL but for the name check.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: not a URL", ErrRefusedAddress)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return nil, fmt.Errorf("%w: scheme %q is not http or https", ErrRefusedAddress, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: a URL with a user name", ErrRefusedAddress)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("%w: no host", ErrRefusedAddress)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w: port %q", ErrRefusedAddress, port)
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return nil, fmt.Errorf("%w: an address with a zone", ErrRefusedAddress)
		}
		return u, nil
	}
	if strings.ContainsAny(host, ":%") {
		return nil, fmt.Errorf("%w: host %q", ErrRefusedAddress, host)
	}
	if endsInNumber(host) {
		return nil, fmt.Errorf("%w: host %q is an address in a non-standard form", ErrRefusedAddress, host)
	}
	return u, nil
}

// endsInNumber is the WHATWG URL standard's test for a host that is an
// IPv4 address in some form (decimal, octal, hex, fewer than four parts):
// its last label (a trailing dot aside) is all digits or "0x" and hex.
// No real top-level domain is.
func endsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X") {
		last = last[2:]
		for _, c := range last {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// origin is a URL's "host:port", with the scheme's port when none is
// given: what Transport dials and what Trusted names.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

func (p *FetchPolicy) trusted(o string) bool {
	for _, t := range p.Trusted {
		if normOrigin(t) == o {
			return true
		}
	}
	return false
}

// normOrigin writes a configured origin ("127.0.0.1:6099", "[::1]:80",
// "http://host:port") as origin does.
func normOrigin(s string) string {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	return origin(u)
}

// redirect follows at most 5 redirects, each to an http(s) URL the first
// check passes; one into a trusted origin keeps its trust only when the
// request it answers was already there.
func (p *FetchPolicy) redirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return fmt.Errorf("%w: more than 5 redirects", ErrRefusedAddress)
	}
	if _, err := checkURL(req.URL.String()); err != nil {
		return err
	}
	o := origin(req.URL)
	from, _ := req.Context().Value(trustKey{}).(string)
	switch {
	case p.trusted(o) && from != o:
		return fmt.Errorf("%w: a redirect into a trusted origin", ErrRefusedAddress)
	case from != o:
		return checkName(req.URL)
	}
	return nil
}

// dial connects to addr ("host:port" of the URL), checking each address
// it dials.
func (p *FetchPolicy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	from, _ := ctx.Value(trustKey{}).(string)
	trusted := from != "" && from == strings.ToLower(addr)
	d := &net.Dialer{Timeout: 10 * time.Second,
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrRefusedAddress, address)
			}
			return p.Check(ap, trusted)
		}}
	if p.Lookup == nil {
		return d.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs := []netip.Addr{}
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, a)
	} else if addrs, err = p.Lookup(ctx, host); err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = fmt.Errorf("%s has no address", host)
	}
	return nil, first
}

// Check returns nil when a download may connect to ap: trusted says the
// request's URL names a trusted origin.
func (p *FetchPolicy) Check(ap netip.AddrPort, trusted bool) error {
	a := ap.Addr().Unmap().WithZone("")
	if p.Allow != nil && p.Allow(ap) {
		return nil
	}
	if p.own(a, ap.Port()) {
		return fmt.Errorf("%w: %s is the daemon's own address", ErrRefusedAddress, ap)
	}
	if why := refusedKind(a); why != "" {
		if trusted && (a.IsLoopback() || a.IsPrivate() || inCGNAT(a)) {
			return nil
		}
		return fmt.Errorf("%w: %s is %s", ErrRefusedAddress, ap, why)
	}
	if p.local(a) {
		return fmt.Errorf("%w: %s is one of this machine's own addresses", ErrRefusedAddress, ap)
	}
	return nil
}

func (p *FetchPolicy) own(a netip.Addr, port uint16) bool {
	if p.Own == "" {
		return false
	}
	host, ps, err := net.SplitHostPort(p.Own)
	if err != nil {
		return false
	}
	if n, err := strconv.Atoi(ps); err != nil || uint16(n) != port {
		return false
	}
	o, err := netip.ParseAddr(host)
	if host == "" || (err == nil && o.IsUnspecified()) || host == "localhost" {
		return a.IsLoopback() || a.IsUnspecified() || p.local(a)
	}
	return err == nil && o.Unmap() == a
}

func (p *FetchPolicy) local(a netip.Addr) bool {
	var own []netip.Addr
	if p.Local != nil {
		own = p.Local()
	} else {
		addrs, _ := net.InterfaceAddrs()
		for _, x := range addrs {
			if n, ok := x.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					own = append(own, ip.Unmap())
				}
			}
		}
	}
	for _, o := range own {
		if o.Unmap() == a {
			return true
		}
	}
	return false
}

var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	special4   = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("240.0.0.0/4")}
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	siteLocal6 = netip.MustParsePrefix("fec0::/10")
)

func inCGNAT(a netip.Addr) bool { return cgnat.Contains(a) }

// refusedKind names why an address is never a chat image's source ("" when
// it may be).
func refusedKind(a netip.Addr) string {
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return refusedKind(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return refusedKind(netip.AddrFrom4([4]byte(b[2:6])))
		case siteLocal6.Contains(a):
			return "a site-local address"
		}
	}
	switch {
	case !a.IsValid():
		return "no address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case a.IsPrivate():
		return "a private address"
	case cgnat.Contains(a):
		return "a shared (CGNAT) address"
	}
	for _, p := range special4 {
		if p.Contains(a) {
			return "a reserved address"
		}
	}
	return ""
}
