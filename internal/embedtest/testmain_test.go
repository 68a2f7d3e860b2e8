package embedtest

import (
	"testing"

	"github.com/cyan-agent/cyan/internal/testexit"
)

func TestMain(m *testing.M) { testexit.Main(m) }
