package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/onebottest"
)

// TestQQStrangersImageAtTheOwnAPI: a stranger in a group sends images whose
// URLs point at the daemon's own API (an export, a backup, the owner's
// avatar, the event stream — through 127.0.0.1, localhost and a decimal
// address), at the cloud metadata service and at a closed port. Every
// message is stored, each image named as not fetched with no error,
// address or port in the text; no export or backup runs and no image is
// kept.
func TestQQStrangersImageAtTheOwnAPI(t *testing.T) {
	t.Parallel()
	r := newQQRig(t, "")
	base := r.d.base // http://127.0.0.1:<port>
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	urls := []string{
		base + "/api/v1/export?format=jsonl",
		base + "/api/v1/backup",
		base + "/api/v1/persona/avatar/avatar.png",
		base + "/api/v1/stream",
		"http://localhost:" + port + "/api/v1/export",
		"http://2130706433:" + port + "/api/v1/export",
		"http://[::ffff:127.0.0.1]:" + port + "/api/v1/export",
		"http://169.254.169.254/latest/meta-data/",
		"http://" + closed + "/a.png",
		"gopher://127.0.0.1:" + port + "/_POST%20/api/v1/export",
	}
	for i, u := range urls {
		r.say(t, 7, "stranger", onebottest.Text(fmt.Sprint("pic ", i)), onebottest.Image(fmt.Sprintf("p%d.png", i), u))
	}
	// file:// and a bare path in the file field are never read.
	r.say(t, 7, "stranger", onebottest.Text("pic file"), onebottest.Seg{Type: "image", Data: map[string]string{"file": "file:///etc/passwd"}})
	r.say(t, 7, "stranger", onebottest.Text("pic path"), onebottest.Seg{Type: "image", Data: map[string]string{"file": "/etc/passwd"}})
	stored := r.stored(t, len(urls)+2)
	_, closedPort, _ := net.SplitHostPort(closed)
	for i, m := range stored {
		text := fmt.Sprint(m["text"])
		if !strings.Contains(text, "not fetched") && !strings.Contains(text, "not downloadable") {
			t.Errorf("message %d: %q does not say the image was not fetched", i, text)
		}
		for _, leak := range []string{"refused", "127.0.0.1", "localhost", port, closedPort, "169.254", "dial", "connect", "%[images", "root:"} {
			if strings.Contains(text, leak) {
				t.Errorf("message %d: %q holds %q", i, text, leak)
			}
		}
	}
	log := r.d.stderr.String()
	if strings.Contains(log, "msg=exported") || strings.Contains(log, `"msg":"exported"`) || strings.Contains(log, "backup failed") {
		t.Errorf("an export or backup ran:\n%s", log)
	}
	if !strings.Contains(log, "refused address") {
		t.Errorf("the log does not say why the images were not fetched:\n%s", log)
	}
}
