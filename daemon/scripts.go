package daemon

// checkScripts logs, at start and whenever the persona folder changes,
// every step whose prompt script does not load — a broken override in the
// persona's scripts/ (script.Library.Broken) — so the mistake shows before
// the step first runs. The daemon still starts: the step fails (and is
// retried, or falls back, as its part does) until the file is fixed.
func (d *Daemon) checkScripts() {
	for _, b := range d.scripts.Broken() {
		d.log.Error("prompt script does not load; its step fails until the file is fixed (cyan script check NAME)",
			"script", b.Name, "step", b.Title, "err", b.Error)
	}
}
