package memlimit

import (
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"6GiB", 6 << 30},
		{"1.5GiB", 3 << 29},
		{"512MiB", 512 << 20},
		{"64KiB", 64 << 10},
		{"2TiB", 2 << 40},
		{"4GB", 4_000_000_000},
		{"750MB", 750_000_000},
		{"1000B", 1000},
		{"123456", 123456},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "GiB", "-1GiB", "0", "6 gigs", "1e30TiB", "auto"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) took it", bad)
		}
	}
	if ParseValue("auto") != nil || ParseValue("off") != nil || ParseValue("6GiB") != nil || ParseValue("lots") == nil {
		t.Error("ParseValue: auto, off and 6GiB are values, lots is not")
	}
}

func TestResolve(t *testing.T) {
	const gb = 1_000_000_000
	laptop := Machine{Available: 10 * gb}
	container := Machine{Available: 60 * gb, CgroupLimit: 8 * gb}
	for _, c := range []struct {
		name, v, env string
		m            Machine
		want         int64
		from         string
	}{
		// 0.8 of 10 GB free.
		{"auto on a laptop", "auto", "", laptop, 8 * gb, "auto: 80% of the 10.0 GB free"},
		// The cgroup's 8 GB, not the host's 60: 6.4 GB.
		{"auto in a container", "auto", "", container, 6_400_000_000, "auto: 80% of the 8.0 GB free"},
		// A host with more free than its cgroup's limit is the same case;
		// one with less takes its own.
		{"auto, host below cgroup", "auto", "", Machine{Available: 5 * gb, CgroupLimit: 8 * gb}, 4 * gb, "auto"},
		{"auto, nothing known", "auto", "", Machine{}, 0, "unknown"},
		{"off", "off", "", laptop, 0, "--memory-limit=off"},
		{"a size", "3GiB", "", laptop, 3 << 30, "--memory-limit=3GiB"},
		{"GOMEMLIMIT wins", "3GiB", "2GiB", laptop, 2 << 30, "GOMEMLIMIT=2GiB"},
		{"GOMEMLIMIT=off is no setting", "auto", "off", laptop, 8 * gb, "auto"},
	} {
		l, err := Resolve(c.v, c.env, c.m)
		if err != nil || l.Bytes != c.want || !strings.Contains(l.From, c.from) {
			t.Errorf("%s: Resolve = %+v, %v; want %d bytes, from %q", c.name, l, err, c.want, c.from)
		}
	}
	if _, err := Resolve("auto", "lots", laptop); err == nil {
		t.Error("a GOMEMLIMIT Go cannot read was taken")
	}
}

func TestReadFormats(t *testing.T) {
	meminfo := "MemTotal:       24000000 kB\nMemFree:         8000000 kB\nMemAvailable:   22498836 kB\nBuffers:  1 kB\n"
	if got, want := MemAvailable([]byte(meminfo)), int64(22498836)*1024; got != want {
		t.Errorf("MemAvailable = %d, want %d", got, want)
	}
	if got := MemAvailable([]byte("MemTotal: 5 kB\n")); got != 0 {
		t.Errorf("MemAvailable of a meminfo without it = %d, want 0", got)
	}
	for _, c := range []struct {
		in   string
		want int64
	}{{"max\n", 0}, {"8589934592\n", 8 << 30}, {"9223372036854771712\n", 0}, {"", 0}} {
		if got := CgroupBytes([]byte(c.in)); got != c.want {
			t.Errorf("CgroupBytes(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestTarget(t *testing.T) {
	const gb = 1_000_000_000
	for _, c := range []struct{ live, floor, ceiling, want int64 }{
		{0, 4 * gb, 19 * gb, 4 * gb},                 // nothing live yet: the estimate
		{3 * gb, 4 * gb, 19 * gb, 4 * gb},            // 3.75 GB is under the estimate
		{8 * gb, 4 * gb, 19 * gb, 10 * gb},           // a quarter above what is live
		{16 * gb, 4 * gb, 19 * gb, 19 * gb},          // never above auto's share
		{1 * gb, 6 * gb, 5 * gb, 5 * gb},             // an estimate above the share: the share
		{400_000_000, 0, 19 * gb, 500_000_000},       // no estimate
		{2 * gb, 4 * gb, 19 * gb, 4 * gb},            // under the floor
		{3_300_000_000, 4 * gb, 19 * gb, 4125e6},     // just over it
		{7_999_999_999, 4 * gb, 19 * gb, 9999999998}, // rounding down
	} {
		if got := Target(c.live, c.floor, c.ceiling); got != c.want {
			t.Errorf("Target(%d, %d, %d) = %d, want %d", c.live, c.floor, c.ceiling, got, c.want)
		}
	}
}

// TestFollow: under auto, Follow sets the estimate, raises the limit when
// the live heap outgrows it, and restores auto's limit when stopped;
// under a size it leaves the limit alone.
func TestFollow(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	if _, err := Apply("auto"); err != nil {
		t.Fatal(err)
	}
	ceiling := debug.SetMemoryLimit(-1)
	const floor = 64 << 20
	if ceiling < 4*floor {
		t.Skipf("auto's limit is %d bytes here, too little to see the limit follow", ceiling)
	}
	stop := Follow(floor)
	if got := debug.SetMemoryLimit(-1); got < floor || got > floor+floor/2 {
		t.Errorf("limit %d right after Follow, want the estimate %d (or a little more)", got, floor)
	}
	held := make([]byte, 4*floor) // live: the limit must rise above it
	for i := range held {
		held[i] = byte(i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < int64(len(held)) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < int64(len(held)) {
		t.Errorf("limit %d with %d bytes live, want it above them", got, len(held))
	}
	runtime.KeepAlive(held)
	if highest := stop(); highest < int64(len(held)) {
		t.Errorf("stop reported %d as the highest limit, want at least %d", highest, len(held))
	}
	if got := debug.SetMemoryLimit(-1); got != ceiling {
		t.Errorf("limit %d after stop, want auto's %d back", got, ceiling)
	}

	if _, err := Apply("3GiB"); err != nil {
		t.Fatal(err)
	}
	if highest := Follow(floor)(); highest != 0 || debug.SetMemoryLimit(-1) != 3<<30 {
		t.Errorf("under --memory-limit=3GiB Follow set %d, limit now %d; want neither changed", highest, debug.SetMemoryLimit(-1))
	}
}

// TestCgroupFiles: a process in a v1 memory cgroup of its own (as a
// cluster manager, or scripts/isolated-check.sh, puts a worker pool)
// reads the limit of its group and of each group above it, not only the
// root's; v2's unified line likewise, and other controllers not at all.
func TestCgroupFiles(t *testing.T) {
	self := "12:pids:/x\n5:cpu,cpuacct:/x\n4:memory:/neardup/pool\n0::/user.slice/u1\n"
	got := CgroupFiles([]byte(self))
	want := []string{
		"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes",
		"/sys/fs/cgroup/memory/neardup/memory.limit_in_bytes", "/sys/fs/cgroup/memory/neardup/pool/memory.limit_in_bytes",
		"/sys/fs/cgroup/user.slice/memory.max", "/sys/fs/cgroup/user.slice/u1/memory.max",
	}
	if !slices.Equal(got, want) {
		t.Errorf("CgroupFiles =\n%q\nwant\n%q", got, want)
	}
}

// TestFreeLessWhatTheGroupHolds: in a cgroup whose other members hold
// 1 GB of its 4 (a worker pool's earlier workers), a process may take 3,
// not 4; never less than nothing.
func TestFreeLessWhatTheGroupHolds(t *testing.T) {
	m := Machine{Available: 20e9, CgroupLimit: 4e9, CgroupUsed: 1e9}
	if got := m.Free(); got != 3e9 {
		t.Errorf("Free = %d, want 3e9", got)
	}
	m.CgroupUsed = 5e9
	if got := m.Free(); got != 0 {
		t.Errorf("Free of an overfull group = %d, want 0", got)
	}
	if got := StatField([]byte("cache 5\ntotal_inactive_file 123\n"), "total_inactive_file"); got != 123 {
		t.Errorf("StatField = %d, want 123", got)
	}
}
