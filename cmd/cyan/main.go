// Command cyan is the companion daemon and its command line; see package
// cmd and the README.
//
// It may import cmd.
package main

import (
	"os"

	"github.com/cyan-agent/cyan/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], cmd.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Env: os.Getenv}))
}
