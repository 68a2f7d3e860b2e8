package clock

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule gives the next time a cron expression fires after t.
type Schedule interface {
	Next(t time.Time) time.Time
}

// The one cron dialect: five fields (minute hour day month weekday, in
// local time) or a descriptor (@hourly, @daily, @weekly, @monthly,
// @yearly, @every 2h), as robfig/cron's ParseStandard reads them. Every
// schedule cyan takes — observers' triggers, events.rollup_schedule,
// backup.schedule — is read here.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron reads a cron expression; its error says how to write one.
func ParseCron(expr string) (Schedule, error) {
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cron spec (%v); write five fields — minute hour day month weekday — e.g. \"0 9 * * 1-5\", or @daily", expr, err)
	}
	return s, nil
}
