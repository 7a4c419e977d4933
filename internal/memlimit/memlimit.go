// Package memlimit sets the Go heap's soft limit
// (runtime/debug.SetMemoryLimit) from the memory the machine, or the
// cgroup the process runs in, has free.
//
// Why: without a limit the collector lets the heap grow to twice the live
// data between collections, and most of a run's peak is garbage it was
// not asked to return. Measured on 5.4 GB of real text, the embedded
// runner peaked at 8.9 GB with no limit and at 4.4 GB with GOMEMLIMIT=4GiB,
// and ran faster (BENCHMARKS.md, issue 26). The limit is soft: a run
// whose live data needs more still gets it, collecting more often.
package memlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The values of --memory-limit besides a size.
const (
	Auto = "auto" // Share of what the machine or cgroup has free
	Off  = "off"  // no limit (Go's default)
)

// Share is the part of the free memory auto takes: the rest is for the
// memory outside Go's heap (goroutine stacks, the runtime's own, files
// mapped) and for the machine's other processes.
const Share = 0.8

// Limit is a soft limit and where it came from.
type Limit struct {
	Bytes int64  // 0: none
	From  string // how it was chosen, for the manifest
	auto  bool   // auto chose it, and Follow may lower it
}

// ParseValue checks a --memory-limit value: auto, off, or a size.
func ParseValue(v string) error {
	if v == Auto || v == Off {
		return nil
	}
	_, err := ParseSize(v)
	return err
}

// ParseSize parses a size as GOMEMLIMIT writes them: a number of bytes
// with an optional unit, B, KiB, MiB, GiB or TiB (powers of 1024), or KB,
// MB, GB, TB (powers of 1000).
func ParseSize(v string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, mult := strings.TrimSpace(v), 1.0
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || f*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("want auto, off or a size such as 6GiB, not %q", v)
	}
	return int64(f * mult), nil
}

// Machine is what the process may take: the machine's free memory
// (MemAvailable of /proc/meminfo: free, and what the kernel can drop)
// and its cgroup's limit (0: none, or unknown).
type Machine struct {
	Available   int64
	CgroupLimit int64
	// CgroupUsed is what the group of that limit holds that the kernel
	// cannot simply drop: its usage less its inactive file pages (the
	// working set, as container runtimes count it), such as other
	// processes' heaps and tmpfs files (a worker pool's earlier workers
	// and their binaries).
	CgroupUsed int64
}

// Free is what the process may take: the machine's free memory, or its
// cgroup's limit if that is less (in a container, MemAvailable is the
// host's), less what the cgroup's other members hold (CgroupUsed, not
// its page cache, which the kernel gives back); 0 when neither is known.
func (m Machine) Free() int64 {
	free := m.Available
	if left := m.CgroupLimit - m.CgroupUsed; m.CgroupLimit > 0 && (free <= 0 || left < free) {
		free = max(left, 0)
	}
	return free
}

// Resolve decides the limit of --memory-limit v on machine m, when the
// environment's GOMEMLIMIT is env: a GOMEMLIMIT set by hand wins, as the
// Go runtime has already applied it.
func Resolve(v, env string, m Machine) (Limit, error) {
	if env != "" && env != "off" {
		n, err := ParseSize(env)
		if err != nil {
			return Limit{}, fmt.Errorf("GOMEMLIMIT: %w", err)
		}
		return Limit{Bytes: n, From: "GOMEMLIMIT=" + env}, nil
	}
	switch v {
	case Off:
		return Limit{From: "--memory-limit=off"}, nil
	case Auto:
		free := m.Free()
		if free <= 0 {
			return Limit{From: "auto: the machine's free memory unknown, so none"}, nil
		}
		n := int64(Share * float64(free))
		return Limit{Bytes: n, From: fmt.Sprintf("auto: %.0f%% of the %.1f GB free at launch", 100*Share, float64(free)/1e9), auto: true}, nil
	}
	n, err := ParseSize(v)
	if err != nil {
		return Limit{}, err
	}
	return Limit{Bytes: n, From: "--memory-limit=" + v}, nil
}

var (
	mu      sync.Mutex
	applied Limit
)

// Apply resolves v on this machine and sets the limit.
func Apply(v string) (Limit, error) {
	mu.Lock()
	defer mu.Unlock()
	l, err := Resolve(v, os.Getenv("GOMEMLIMIT"), ReadMachine())
	if err != nil {
		return l, err
	}
	if l.Bytes > 0 {
		debug.SetMemoryLimit(l.Bytes)
	}
	applied = l
	return l, nil
}

// Auto reports whether --memory-limit=auto chose l (not a size or
// GOMEMLIMIT set by hand).
func (l Limit) Auto() bool { return l.auto }

// Capped reports whether what m leaves the process is its cgroup's limit
// (the kernel kills a group past it), not the machine's free memory.
func (m Machine) Capped() bool {
	return m.CgroupLimit > 0 && (m.Available <= 0 || m.CgroupLimit-m.CgroupUsed < m.Available)
}

// Applied is the limit Apply set (the zero Limit when it was not called).
func Applied() Limit {
	mu.Lock()
	defer mu.Unlock()
	return applied
}

// ReadMachine reads this machine's free memory and its cgroup's limit (v2, else v1);
// what it cannot read is 0.
func ReadMachine() Machine {
	var m Machine
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.Available = MemAvailable(b)
	}
	self, _ := os.ReadFile("/proc/self/cgroup")
	for _, f := range CgroupFiles(self) {
		if b, err := os.ReadFile(f); err == nil {
			if n := CgroupBytes(b); n > 0 && (m.CgroupLimit == 0 || n < m.CgroupLimit) {
				m.CgroupLimit, m.CgroupUsed = n, cgroupUsed(path.Dir(f))
			}
		}
	}
	return m
}

// cgroupUsed is the working set of the cgroup in dir (v1 or v2): its
// usage less its inactive file pages; 0 when unknown.
func cgroupUsed(dir string) int64 {
	usage, stat, inactive := "memory.current", "memory.stat", "inactive_file"
	if strings.HasPrefix(dir, "/sys/fs/cgroup/memory") {
		usage, inactive = "memory.usage_in_bytes", "total_inactive_file"
	}
	b, err := os.ReadFile(path.Join(dir, usage))
	if err != nil {
		return 0
	}
	used := CgroupBytes(b)
	if b, err := os.ReadFile(path.Join(dir, stat)); err == nil {
		used -= StatField(b, inactive)
	}
	return max(used, 0)
}

// StatField is the value of key in a cgroup's memory.stat (0 when
// absent).
func StatField(stat []byte, key string) int64 {
	for _, line := range strings.Split(string(stat), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// CgroupFiles are the memory limit files that bound a process whose
// /proc/self/cgroup reads self: those of its own memory cgroup and of
// each group above it, v2's memory.max and v1's memory.limit_in_bytes
// under /sys/fs/cgroup. Its own group, not only the root's: a worker
// that a cluster manager (or a test) puts in a cgroup of its own, without
// a cgroup namespace, sees the root's files unlimited, and its group's
// limit only under its path. The lowest of them is the limit.
func CgroupFiles(self []byte) []string {
	files := []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}
	for _, line := range strings.Split(string(self), "\n") {
		// hierarchy-ID:controllers:path; v2's controllers are empty.
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		dir, name := "/sys/fs/cgroup", "memory.max"
		switch {
		case parts[0] == "0" && parts[1] == "":
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			dir, name = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		path := ""
		for _, seg := range strings.Split(strings.Trim(parts[2], "/"), "/") {
			if seg == "" || seg == ".." {
				continue
			}
			path += "/" + seg
			files = append(files, dir+path+"/"+name)
		}
	}
	return files
}

// MemAvailable is the MemAvailable line of /proc/meminfo, in bytes (0
// when absent).
func MemAvailable(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			if len(f) >= 3 && f[2] == "kB" {
				n *= 1024
			}
			return n
		}
	}
	return 0
}

// CgroupBytes parses a cgroup memory file: a number of bytes, or "max"
// (no limit) as 0. Cgroup v1 writes its "no limit" as a number near
// 2^63, which is as good as none.
func CgroupBytes(b []byte) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n >= 1<<62 {
		return 0
	}
	return n
}

// Headroom is how far above the live heap a followed limit stays (see
// Follow): the collector runs when the heap has grown by a quarter of
// what the last collection kept, instead of by all of it.
const Headroom = 0.25

// Target is the limit Follow sets for a live heap of live bytes: Headroom
// above it, at least floor, at most ceiling.
func Target(live, floor, ceiling int64) int64 {
	return min(max(int64(float64(live)*(1+Headroom)), floor), ceiling)
}

// Follow, when the limit Apply set is auto, lowers it to what the run is
// estimated to need (floor: the launcher's estimate from the input's
// footers) and from then on keeps it Headroom above the live heap, never
// under floor nor over auto's share of the free memory, until stop is
// called, which restores auto's limit and returns the highest limit set.
//
// Why: auto's share of a large machine is far above what a run keeps
// live, so the heap grew to twice the live data before each collection:
// 8.5 GB over 5.0 GB of text, where a limit of 4.7 GB took the same time
// (74 against 75 s) and 3.8 GB 2% more (BENCHMARKS.md, issue 26).
// Following the live heap rather than fixing the limit at the estimate
// keeps a run whose live data outgrows the estimate (many candidate
// pairs per byte of text) from collecting without end. Only the launcher
// of an embedded run calls it: there its workers share its heap.
func Follow(floor int64) (stop func() int64) {
	mu.Lock()
	defer mu.Unlock()
	if !applied.auto || applied.Bytes <= 0 {
		return func() int64 { return 0 }
	}
	ceiling := applied.Bytes
	var highest int64
	set := func(n int64) {
		if n != debug.SetMemoryLimit(-1) {
			debug.SetMemoryLimit(n)
		}
		highest = max(highest, n)
	}
	set(Target(0, floor, ceiling))
	done, finished := make(chan struct{}), make(chan struct{})
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	go func() {
		defer close(finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				metrics.Read(sample)
				if sample[0].Value.Kind() == metrics.KindUint64 {
					set(Target(int64(sample[0].Value.Uint64()), floor, ceiling))
				}
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		debug.SetMemoryLimit(ceiling)
		return highest
	}
}
