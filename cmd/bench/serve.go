package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neardup/neardup/views/query"
	"github.com/neardup/neardup/views/serve"
)

// serveMain is "bench serve": a load test of runner serve on localhost.
// --clients clients each send requests one after another for --duration:
// searches by URL and cluster pages (7 in 10), side-by-side views, two
// texts read from the input (2 in 10), and searches by pasted text, 2/3
// of a page whose sketch keeps some shingle (1 in 10). It prints the latency percentiles of each
// kind and counts every answer that is not a 200.
func serveMain(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	from := fs.String("from", "", "a finished neardup output")
	clients := fs.Int("clients", 50, "concurrent clients")
	duration := fs.Duration("duration", 10*time.Second, "how long the clients send requests")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the load here")
	fs.Parse(args)
	if *from == "" {
		return fmt.Errorf("serve needs --from")
	}
	ctx := context.Background()
	ix, err := query.Open(ctx, *from)
	if err != nil {
		return err
	}
	// Requests built from the index: clusters of two or more, their
	// first members' URLs, and pages' texts.
	clusters, _, err := ix.Clusters(ctx, 0, 2000)
	if err != nil {
		return err
	}
	var paths []string
	var compares, texts []string
	for i, c := range clusters {
		_, members, _, _, err := ix.ClusterPage(ctx, c.ClusterID, 0, 2)
		if err != nil {
			return err
		}
		if len(members) < 2 {
			continue
		}
		paths = append(paths, fmt.Sprintf("/cluster/%d", c.ClusterID))
		compares = append(compares, fmt.Sprintf("/compare?a=%d&b=%d", members[0].DocID, members[1].DocID))
		if members[1].URL != "" {
			paths = append(paths, "/search?url="+url.QueryEscape(members[1].URL))
		}
		if i%10 == 0 && len(texts) < 100 {
			if t, err := ix.TextOf(ctx, members[1].DocID); err == nil {
				page := t[:len(t)*2/3]
				if _, err := ix.Text(ctx, query.Page{Content: page}, 0.5, 1, false); err == nil {
					texts = append(texts, page)
				}
			}
		}
	}
	if len(paths) == 0 || len(texts) == 0 {
		return fmt.Errorf("%s has no cluster to load the app with", *from)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := serve.Server(ln.Addr().String(), serve.Handler(ix))
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients}, Timeout: 30 * time.Second}

	kinds := []string{"search by URL, cluster page", "side by side", "search by text"}
	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	failures := map[string]int{}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	stop := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 7))
			for time.Now().Before(stop) {
				var req *http.Request
				var kind string
				switch n := r.IntN(10); {
				case n < 7:
					kind = kinds[0]
					req, _ = http.NewRequest(http.MethodGet, base+paths[r.IntN(len(paths))], nil)
				case n < 9:
					kind = kinds[1]
					req, _ = http.NewRequest(http.MethodGet, base+compares[r.IntN(len(compares))], nil)
				default:
					kind = kinds[2]
					form := url.Values{"text": {texts[r.IntN(len(texts))]}}
					req, _ = http.NewRequest(http.MethodPost, base+"/search", strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				t := time.Now()
				resp, err := client.Do(req)
				ok := err == nil && resp.StatusCode == http.StatusOK
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				d := time.Since(t)
				mu.Lock()
				lat[kind] = append(lat[kind], d)
				if !ok {
					failures[kind]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := 0
	fmt.Printf("## Serve under load\n\n%s: %d documents; %d clients for %v on localhost\n\n", *from, ix.NumDocs(), *clients, *duration)
	fmt.Printf("| requests | count | not 200 | p50 ms | p90 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|---:|---:|\n")
	var all []time.Duration
	for _, k := range kinds {
		d := lat[k]
		all = append(all, d...)
		total += len(d)
		printRow(k, d, failures[k])
	}
	printRow("all", all, failures[kinds[0]]+failures[kinds[1]]+failures[kinds[2]])
	fmt.Printf("\n%.0f requests a second\n", float64(total)/duration.Seconds())
	return nil
}

func printRow(name string, d []time.Duration, failed int) {
	if len(d) == 0 {
		fmt.Printf("| %s | 0 | %d | | | | |\n", name, failed)
		return
	}
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / 1e6 }
	fmt.Printf("| %s | %d | %d | %.1f | %.1f | %.1f | %.1f |\n", name, len(d), failed, at(0.5), at(0.9), at(0.99), at(1))
}
