package daemon

// The chat platforms and voice providers this build has. Each registers
// itself (package registry) from its init; the daemon, config, doctor and
// help read the registry. Adding a platform is a package and a line here
// (package bridge's doc says how).
import (
	_ "github.com/cyan-agent/cyan/bridge/onebot"
	_ "github.com/cyan-agent/cyan/bridge/telegram"
	_ "github.com/cyan-agent/cyan/tts"
)
