package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
)

type row struct {
	ID   string `parquet:"id"`
	Text string `parquet:"text"`
}

func main() {
	files, _ := filepath.Glob(os.Args[1])
	fams := map[string][]string{}
	for _, f := range files {
		rows, err := parquet.ReadFile[row](f)
		if err != nil {
			panic(err)
		}
		for _, r := range rows {
			if strings.HasPrefix(r.ID, "family-") {
				k := strings.Split(r.ID, "-copy-")[0]
				fams[k] = append(fams[k], r.Text)
			} else if strings.HasPrefix(r.ID, "template-") {
				fams["template"] = append(fams["template"], r.Text)
			}
		}
	}
	cfg := settings.Default()
	rs, _ := rowsketch.New(cfg)
	h := fingerprint.New(cfg.Seed)
	for _, k := range slices.Sorted(func(y func(string) bool) { for k := range fams { if !y(k) { return } } }) {
		texts := fams[k]
		r := rand.New(rand.NewPCG(1, 2))
		var res []float64
		for range 400 {
			a, b := r.IntN(len(texts)), r.IntN(len(texts))
			if a == b {
				continue
			}
			fa := rs.Features(nil, texts[a], canon.AppendHashes(nil, h, texts[a]))
			fb := rs.Features(nil, texts[b], canon.AppendHashes(nil, h, texts[b]))
			res = append(res, sketch.Jaccard(fa, fb))
		}
		slices.Sort(res)
		fmt.Printf("%s: %d copies, resemblance min %.3f p10 %.3f median %.3f p90 %.3f, words %d\n", k, len(texts), res[0], res[len(res)/10], res[len(res)/2], res[len(res)*9/10], len(strings.Fields(texts[0])))
	}
}
