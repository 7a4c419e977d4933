package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/neardup/neardup/internal/s3test"
)

// TestMain runs the command itself when the test re-executes this binary.
func TestMain(m *testing.M) {
	if os.Getenv("S3SERVER_CHILD") != "" {
		os.Args = append([]string{"s3server"}, strings.Fields(os.Getenv("S3SERVER_CHILD"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// TestServes starts the command on a free port with two buckets, reads
// the environment it prints, reaches both buckets with a client made
// from that environment alone, and stops it with SIGTERM.
func TestServes(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "S3SERVER_CHILD=--addr 127.0.0.1:0 --bucket neardup-in,neardup-out --bucket third")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	env := map[string]string{}
	unset := map[string]bool{}
	sc := bufio.NewScanner(out)
	lines := len(new(s3test.Server).Env())
	for len(env)+len(unset) < lines && sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "unset "); ok {
			unset[name] = true
			continue
		}
		kv, ok := strings.CutPrefix(line, "export ")
		k, v, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 || len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
			t.Fatalf("line %q is not export NAME='VALUE' nor unset NAME", line)
		}
		env[k] = v[1 : len(v)-1]
	}
	if !strings.HasPrefix(env["AWS_ENDPOINT_URL"], "http://127.0.0.1:") || env["AWS_ENDPOINT_URL"] == "http://127.0.0.1:0" || !unset["AWS_PROFILE"] {
		t.Fatalf("printed %v, unset %v; stderr: %s", env, unset, stderr.String())
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	for k := range unset {
		t.Setenv(k, "")
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := s3.NewFromConfig(cfg)
	ctx := context.Background()
	for _, b := range []string{"neardup-in", "neardup-out", "third"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader(b)}); err != nil {
			t.Fatalf("put to bucket %s: %v", b, err)
		}
		o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
		if err != nil {
			t.Fatalf("get from bucket %s: %v", b, err)
		}
		got, _ := io.ReadAll(o.Body)
		o.Body.Close()
		if string(got) != b {
			t.Errorf("bucket %s holds %q", b, got)
		}
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("absent"), Key: aws.String("k"), Body: strings.NewReader("x")}); err == nil {
		t.Error("put to a bucket never created succeeded")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20 s after SIGTERM")
	}
	if !strings.Contains(stderr.String(), "stopped by terminated") {
		t.Errorf("stderr %q does not say it stopped", stderr.String())
	}
}

// TestRefuses: no bucket is a usage error; a host name is refused.
func TestRefuses(t *testing.T) {
	for _, c := range []struct {
		args string
		code int
		want string
	}{
		{"--addr 127.0.0.1:0", 2, "usage"},
		{"--addr localhost:0 --bucket b12", 1, "loopback IP"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "S3SERVER_CHILD="+c.args)
		out, err := cmd.CombinedOutput()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("s3server %s: exit %d (%v), output %q; want exit %d mentioning %q", c.args, code, err, out, c.code, c.want)
		}
	}
}
