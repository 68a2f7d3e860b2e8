package tools

import (
	"context"
	"runtime"
	"testing"
)

// TestAIToolsRunOneAtATime: AI tools queue in arrival order; a waiter that
// gives up leaves the queue without taking the slot.
func TestAIToolsRunOneAtATime(t *testing.T) {
	f := newFIFO()
	release, err := f.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 3)
	started := make(chan struct{}, 3)
	cancelled, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { started <- struct{}{}; _, err := f.acquire(cancelled); done <- err }()
	<-started
	waitQueued(f, 1)
	for i := 1; i <= 2; i++ {
		go func() {
			r, _ := f.acquire(context.Background())
			order <- i
			r()
		}()
		waitQueued(f, i+1)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled waiter got the slot")
	}
	release()
	if a, b := <-order, <-order; a != 1 || b != 2 {
		t.Fatalf("order %d, %d", a, b)
	}
	r, err := f.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r()
}

func waitQueued(f *fifo, n int) {
	for {
		f.mu.Lock()
		q := len(f.queue)
		f.mu.Unlock()
		if q >= n {
			return
		}
		runtime.Gosched()
	}
}
