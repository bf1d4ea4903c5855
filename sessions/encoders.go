package sessions

import (
	"fmt"
	"runtime"
	"sync"
)

// Encoders encode a commit's blobs on the host's other cores while the
// one goroutine that may write SQLite inserts them: the committer's batch
// of a GPU's chunk (102,400 results, 25 blobs, their digest hashes and
// best Sharpe), the parity report's rows in Finish. SQLite takes a blob in
// less time than encoding and hashing it took on the committer alone,
// which after a GPU study's last lane is time the process waits for
// (docs/PERFORMANCE.md, "Issue 29: saving beside the sweep").

// encoders computes f(0), ..., f(n-1) on up to workers goroutines, at most
// ahead results before the one next takes, and hands them back in order.
// Safe for one consumer.
type encoders[T any] struct {
	out  []chan result[T] // out[i] receives f(i)'s result, once
	room chan struct{}    // a token per result computed or being computed, not yet taken
	quit chan struct{}
	done sync.WaitGroup // the feeder and the workers
	i    int            // the next result next takes
	once sync.Once
}

type result[T any] struct {
	v   T
	err error // a panic in f
}

// encodeWorkers is how many goroutines encoders compute on: every core
// but the inserting goroutine's, at least one.
func encodeWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// startEncoders starts computing f(i) for i in [0, n) on workers
// goroutines (at least 1), at most ahead (at least 1) results ahead of the
// consumer. f must be safe to call concurrently for distinct i. stop must
// be called once the consumer is done (or gives up).
func startEncoders[T any](n, workers, ahead int, f func(i int) T) *encoders[T] {
	workers, ahead = max(workers, 1), max(ahead, 1)
	p := &encoders[T]{out: make([]chan result[T], n), room: make(chan struct{}, ahead), quit: make(chan struct{})}
	for i := range p.out {
		p.out[i] = make(chan result[T], 1) // a worker never waits for the consumer
	}
	jobs := make(chan int)
	p.done.Go(func() {
		defer close(jobs)
		for i := range n {
			select {
			case p.room <- struct{}{}:
			case <-p.quit:
				return
			}
			select {
			case jobs <- i:
			case <-p.quit:
				return
			}
		}
	})
	for range min(workers, max(n, 1)) {
		p.done.Go(func() {
			for i := range jobs {
				p.out[i] <- run(f, i)
			}
		})
	}
	return p
}

// run is f(i), a panic in it turned into the result's error (it would
// otherwise kill the process, and the study with it).
func run[T any](f func(int) T, i int) (r result[T]) {
	defer func() {
		if x := recover(); x != nil {
			r.err = fmt.Errorf("panic while encoding: %v", x)
		}
	}()
	return result[T]{v: f(i)}
}

// next returns f(i) for the next i, in order, waiting for it; a panic in
// f comes back as the error. It must not be called more than n times.
func (p *encoders[T]) next() (T, error) {
	r := <-p.out[p.i]
	p.i++
	<-p.room
	return r.v, r.err
}

// stop ends the encoders: nothing more is started, and stop returns once
// every f already started has returned (what f reads is the caller's
// again).
func (p *encoders[T]) stop() {
	p.once.Do(func() { close(p.quit) })
	p.done.Wait()
}
