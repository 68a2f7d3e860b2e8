package tools

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cyan-agent/cyan/glob"
)

// DefaultSecrets are the credential files and folders, by kind, that the
// file tools refuse and the sandbox covers wherever they are under a root
// (tools.secrets adds to them, and "!name" drops one). An entry is one or
// more path components, each a glob of path.Match: ".netrc" is a file or
// folder of that name at any depth, ".docker/config.json" that file in a
// .docker folder; whatever is inside a listed folder is covered with it.
// Besides names, a file is a secret by what it holds (SecretContent): its
// first bytes a private key ("-----BEGIN … PRIVATE KEY-----", PuTTY, age)
// wherever it is, or a git config (.git/config, .gitconfig) whose remote
// URL or extra header carries a password or token.
var DefaultSecrets = []string{
	// keys and keyrings
	".ssh", ".gnupg", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
	".password-store", ".local/share/keyrings", ".pki",
	// environment files
	".env", ".env.*", ".envrc",
	// cloud command lines
	".aws", ".azure", ".config/gcloud", ".oci", ".config/doctl", ".config/hcloud", ".boto", ".s3cfg",
	// network and version-control logins
	".netrc", "_netrc", ".git-credentials", ".config/gh/hosts.yml", ".config/hub",
	// package registries
	".npmrc", ".yarnrc.yml", ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
	".m2/settings.xml", ".gradle/gradle.properties", ".nuget/NuGet/NuGet.Config", ".composer/auth.json",
	// containers and clusters
	".docker/config.json", ".kube/config", ".config/containers/auth.json", ".vault-token",
	// infrastructure and sync tools
	".terraformrc", "terraform.rc", "credentials.tfrc.json", "rclone.conf",
	// password managers (1Password's app data and its op command line)
	".config/op", ".op", "1Password", "1password", ".1password", "*.kdbx", "*.keychain", "*.keychain-db",
	// browser profiles: saved logins, their keys, cookies
	"logins.json", "logins-backup.json", "key3.db", "key4.db", "signons.sqlite", "cookies.sqlite",
	"Login Data", "Login Data For Account", "Network/Cookies", "Local State",
	// databases
	".pgpass", ".my.cnf", ".mylogin.cnf",
	// shell and REPL histories
	".history", ".bash_history", ".zsh_history", ".sh_history", ".python_history", ".node_repl_history",
	".psql_history", ".mysql_history", ".sqlite_history", ".*history", ".lesshst", ".viminfo",
	"fish_history", ".local/share/fish", "*_history", "*_history.txt", ".*_hist", ".rediscli_history",
	".local/share/atuin", ".config/nushell/history.*",
}

// Secrets matches paths against the credential list (DefaultSecrets and
// tools.secrets).
type Secrets struct {
	patterns [][]string      // each split into components
	names    map[string]bool // the one-part entries without wildcards
	globs    [][]string      // the rest
	words    []string        // literal names a command may not mention
}

// NewSecrets builds the list: the defaults, then each entry of extra added
// (or, written "!entry", a default dropped). A bad entry is an error that
// names it.
func NewSecrets(extra []string) (*Secrets, error) {
	list := slices.Clone(DefaultSecrets)
	for i, e := range extra {
		e = strings.TrimSpace(e)
		drop, neg := strings.CutPrefix(e, "!")
		p := strings.Trim(drop, "/")
		if p == "" || strings.Contains(p, "//") || strings.Contains(p, "\\") || slices.Contains(strings.Split(p, "/"), "..") {
			return nil, fmt.Errorf("tools.secrets[%d]: %q is not a file or folder name (write .netrc, .aws or .docker/config.json)", i, e)
		}
		for _, part := range strings.Split(p, "/") {
			if err := glob.Check(part); err != nil {
				return nil, fmt.Errorf("tools.secrets[%d]: %q: %v", i, e, err)
			}
		}
		if neg {
			if !slices.Contains(list, p) {
				return nil, fmt.Errorf("tools.secrets[%d]: %q drops %s, which is not in the list", i, e, p)
			}
			list = slices.DeleteFunc(list, func(s string) bool { return s == p })
			continue
		}
		list = append(list, p)
	}
	s := &Secrets{names: map[string]bool{}}
	for _, p := range list {
		parts := strings.Split(p, "/")
		s.patterns = append(s.patterns, parts)
		if len(parts) == 1 && !strings.ContainsAny(p, "*?") {
			s.names[p] = true
		} else {
			s.globs = append(s.globs, parts)
		}
		if w := parts[len(parts)-1]; len(w) >= 4 && !strings.ContainsAny(w, "*?") {
			s.words = append(s.words, w)
		}
	}
	return s, nil
}

// Match reports the entry a path falls under: any run of its components
// that matches an entry, so a listed folder covers what is inside it.
func (s *Secrets) Match(p string) (string, bool) {
	if s == nil {
		return "", false
	}
	parts := strings.Split(filepath.ToSlash(p), "/")
	for _, pat := range s.patterns {
		for i := 0; i+len(pat) <= len(parts); i++ {
			ok := true
			for j, g := range pat {
				if !glob.Path(g, parts[i+j]) {
					ok = false
					break
				}
			}
			if ok {
				return strings.Join(pat, "/"), true
			}
		}
	}
	return "", false
}

// MatchTail reports whether the path itself (its last components) is a
// listed file or folder: what a walk that stops at every match needs,
// cheaper than Match.
func (s *Secrets) MatchTail(p string) bool {
	if s == nil {
		return false
	}
	parts := strings.Split(filepath.ToSlash(p), "/")
	if s.names[parts[len(parts)-1]] {
		return true
	}
	for _, pat := range s.globs {
		if len(pat) > len(parts) {
			continue
		}
		tail := parts[len(parts)-len(pat):]
		ok := true
		for j := len(pat) - 1; j >= 0 && ok; j-- { // the last part first: it tells most apart
			ok = matchPart(pat[j], tail[j])
		}
		if ok {
			return true
		}
	}
	return false
}

// matchPart matches one path component against one part of an entry.
func matchPart(pattern, name string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == name
	}
	return glob.Path(pattern, name)
}

// Mentions reports a credential name (one without wildcards) a command
// spells out, for the terminal's first, lexical refusal (the sandbox
// covers the files themselves, however they are spelled).
func (s *Secrets) Mentions(cmd string) (string, bool) {
	if s == nil {
		return "", false
	}
	for _, w := range s.words {
		if strings.Contains(cmd, w) {
			return w, true
		}
	}
	return "", false
}

// keyHeadBytes is how much of a file IsPrivateKey looks at.
const keyHeadBytes = 4 << 10

// contentHeadBytes is how much of a file SecretContent looks at: key
// files and git configs are a few KiB.
const contentHeadBytes = 16 << 10

// SecretContent reports what kind of credential a file holds, from its
// path and its first bytes (up to contentHeadBytes): a private key
// anywhere (IsPrivateKey), or, in a git config (IsGitConfig), a remote URL
// with a password or token or an http extraHeader with an Authorization.
// It is the one rule by content that the file tools and the sandbox share,
// beside the list of names (Secrets).
func SecretContent(p string, head []byte) (string, bool) {
	if len(head) > contentHeadBytes {
		head = head[:contentHeadBytes]
	}
	if IsPrivateKey(head) {
		return "a private key", true
	}
	if IsGitConfig(p) && gitToken.Match(head) {
		return "a git config with a token in a remote URL or header", true
	}
	return "", false
}

// IsGitConfig reports whether a path names a git config: a repository's
// .git/config (or a worktree's config.worktree, a bare repository's config
// beside HEAD is not told apart) or a user's .gitconfig / git/config.
func IsGitConfig(p string) bool {
	parts := strings.Split(filepath.ToSlash(p), "/")
	last := parts[len(parts)-1]
	if last == ".gitconfig" {
		return true
	}
	if len(parts) < 2 {
		return false
	}
	parent := parts[len(parts)-2]
	return (last == "config" || last == "config.worktree") && (parent == ".git" || parent == "git")
}

// gitToken finds what makes a git config a credential: a URL whose
// user-info holds a password (https://user:TOKEN@host) or is a token alone
// (https://ghp_…@host, 20 characters or more), or an extraHeader that
// authorizes (actions/checkout's "AUTHORIZATION: basic …").
var gitToken = regexp.MustCompile(`(?im)[a-z][a-z0-9+.-]*://[^\s/@:]*:[^\s/@]+@|https?://[A-Za-z0-9_.~%-]{20,}@|extraheader\s*=\s*"?\s*authorization\s*:`)

var privateKeyHeader = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|^PuTTY-User-Key-File-\d|^AGE-SECRET-KEY-1`)

// IsPrivateKey reports whether the first bytes of a file (up to
// keyHeadBytes) hold a private key: a PEM or OpenSSH block
// ("-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE
// KEY-----", PGP's "PRIVATE KEY BLOCK"), a PuTTY key or an age identity.
func IsPrivateKey(head []byte) bool {
	if len(head) > keyHeadBytes {
		head = head[:keyHeadBytes]
	}
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if !bytes.Contains(head, []byte("PRIVATE KEY")) && !bytes.HasPrefix(head, []byte("PuTTY-User-Key-File-")) && !bytes.HasPrefix(head, []byte("AGE-SECRET-KEY-1")) {
		return false // the common case, without the regexp
	}
	return privateKeyHeader.Match(head)
}
