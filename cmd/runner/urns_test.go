package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// pipelineURNs are the URNs a pipeline proto asks its runner to support,
// by kind: each leaf transform's, each coder's, each side input's access
// pattern, each windowing strategy's window function and each
// environment's. (A composite's URN is only a name: runners expand it
// into its leaves.)
func pipelineURNs(t *testing.T, p *pipepb.Pipeline) map[string]string {
	t.Helper()
	urns := map[string]string{}
	c := p.GetComponents()
	for _, tr := range c.GetTransforms() {
		if len(tr.GetSubtransforms()) > 0 || tr.GetSpec().GetUrn() == "" {
			continue
		}
		urns[tr.GetSpec().GetUrn()] = "transform"
		if tr.GetSpec().GetUrn() == "beam:transform:pardo:v1" {
			var pd pipepb.ParDoPayload
			if err := proto.Unmarshal(tr.GetSpec().GetPayload(), &pd); err != nil {
				t.Fatalf("%s: %v", tr.GetUniqueName(), err)
			}
			for _, si := range pd.GetSideInputs() {
				urns[si.GetAccessPattern().GetUrn()] = "side input"
			}
			if len(pd.GetStateSpecs()) > 0 || len(pd.GetTimerFamilySpecs()) > 0 || pd.GetRestrictionCoderId() != "" {
				urns["state, timers or a splittable DoFn in "+tr.GetUniqueName()] = "pardo feature"
			}
		}
	}
	for _, cd := range c.GetCoders() {
		urns[cd.GetSpec().GetUrn()] = "coder"
	}
	for _, ws := range c.GetWindowingStrategies() {
		urns[ws.GetWindowFn().GetUrn()] = "window"
	}
	for _, env := range c.GetEnvironments() {
		urns[env.GetUrn()] = "environment"
	}
	for _, r := range p.GetRequirements() {
		urns[r] = "requirement"
	}
	return urns
}

// printedPipeline is the pipeline proto a Dataflow dry run prints, in
// its text form, on the line after the SDK's "Dry-run" line.
func printedPipeline(t *testing.T, stdout string) *pipepb.Pipeline {
	t.Helper()
	lines := strings.Split(stdout, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Dry-run") })
	if i < 0 || i+1 >= len(lines) {
		t.Fatalf("no pipeline printed on stdout:\n%.2000s", stdout)
	}
	var p pipepb.Pipeline
	if err := prototext.Unmarshal([]byte(lines[i+1]), &p); err != nil {
		t.Fatalf("the printed pipeline: %v", err)
	}
	return &p
}

// supportedURNs is docs/cluster.md's table of what neardup's pipelines
// ask of a runner: its rows "| `URN` | kind | Flink | Dataflow |", each
// engine's column saying where its support is stated.
func supportedURNs(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile("../../docs/cluster.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\|$")
	table := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		if strings.TrimSpace(m[3]) == "" || strings.TrimSpace(m[4]) == "" {
			t.Errorf("docs/cluster.md: %s does not say where each engine supports it", m[1])
		}
		table[m[1]] = true
	}
	if len(table) == 0 {
		t.Fatal("docs/cluster.md has no table of URNs")
	}
	return table
}

// checkURNs fails on a URN of p outside docs/cluster.md's table.
func checkURNs(t *testing.T, p *pipepb.Pipeline) {
	t.Helper()
	table := supportedURNs(t)
	urns := pipelineURNs(t, p)
	for urn, kind := range urns {
		if !table[urn] {
			t.Errorf("the pipeline asks for %s %s, which docs/cluster.md's table does not list as supported by Flink's portable batch translator and Dataflow Runner v2", kind, urn)
		}
	}
}
