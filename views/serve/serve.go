// Package serve is a small read-only web app over a finished neardup
// output: search by URL or pasted text, the clusters by size, a cluster's
// members, and two documents side by side with the text they share
// marked. It shows only the output's own documents (their texts read back
// from the input files by the docs table's source_file and source_row,
// never a path from a request), escapes everything it shows
// (html/template), and bounds what a request may send and how long it may
// take.
package serve

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/neardup/neardup/views/query"
)

// Limits of a request.
const (
	// MaxBody bounds a request's body (a pasted page): 1 MiB.
	MaxBody = 1 << 20
	// Timeout bounds the time to answer one request.
	Timeout = 10 * time.Second
	// pageSize is how many clusters a page of the clusters list shows.
	pageSize = 50
	// memberPage is how many members a page of a cluster shows.
	memberPage = 200
	// maxMatches bounds a text search's list.
	maxMatches = 50
)

//go:embed templates/*.html
var templateFiles embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"pct":   func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) },
	"opt":   func(x *float64) string { return optional(x) },
	"add":   func(a, b int) int { return a + b },
	"deref": func(x *int64) int64 { return *x },
}).ParseFS(templateFiles, "templates/*.html"))

func optional(x *float64) string {
	if x == nil {
		return "-"
	}
	return strconv.FormatFloat(*x, 'f', 3, 64)
}

// Handler serves the app over ix.
func Handler(ix *query.Index) http.Handler {
	s := &server{ix: ix}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /search", s.searchURL)
	mux.HandleFunc("POST /search", s.searchText)
	mux.HandleFunc("GET /clusters", s.clusters)
	mux.HandleFunc("GET /cluster/{id}", s.cluster)
	mux.HandleFunc("GET /doc/{id}", s.doc)
	mux.HandleFunc("GET /compare", s.compare)
	return http.TimeoutHandler(secure(mux), Timeout, "the request took too long")
}

// Server is an http.Server for the handler with every timeout and size
// bound set.
func Server(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: Timeout + 5*time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10}
}

// secure adds the headers that keep the pages inert: no script, frame or
// remote resource at all, whatever a crawled page's text holds.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

type server struct{ ix *query.Index }

// render writes a page, or a 500 if the template fails (nothing is sent
// before the page is whole).
func (s *server) render(w http.ResponseWriter, name string, status int, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		log.Printf("serve: %s: %v", name, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// fail shows an error page with the status.
func (s *server) fail(w http.ResponseWriter, status int, msg string) {
	s.render(w, "error.html", status, map[string]any{"Title": http.StatusText(status), "Status": status, "Message": msg, "Dir": s.ix.Dir})
}

// intParam reads a required integer parameter; ok is false after a 400.
func (s *server) intParam(w http.ResponseWriter, name, v string) (int64, bool) {
	x, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Sprintf("%s must be an integer", name))
		return 0, false
	}
	return x, true
}

func (s *server) home(w http.ResponseWriter, r *http.Request) {
	_, n, err := s.ix.Clusters(r.Context(), 0, 0)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.render(w, "home.html", http.StatusOK, map[string]any{"Title": "neardup", "Dir": s.ix.Dir, "Docs": s.ix.NumDocs(), "Clusters": n,
		"Settings": s.ix.Manifest.Settings})
}

func (s *server) searchURL(w http.ResponseWriter, r *http.Request) {
	url := r.URL.Query().Get("url")
	if url == "" || len(url) > 8<<10 {
		s.fail(w, http.StatusBadRequest, "give a URL of at most 8 KiB")
		return
	}
	answers, err := s.ix.URL(r.Context(), url, false)
	if errors.Is(err, query.ErrUnknownURL) {
		s.fail(w, http.StatusNotFound, err.Error())
		return
	}
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.render(w, "url.html", http.StatusOK, map[string]any{"Title": "URL " + url, "Dir": s.ix.Dir, "URL": url, "Answers": answers})
}

func (s *server) searchText(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a pasted page may have at most %d bytes", MaxBody))
			return
		}
		s.fail(w, http.StatusBadRequest, "the form could not be read")
		return
	}
	text := r.PostForm.Get("text")
	threshold := 0.5
	if v := r.PostForm.Get("threshold"); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || t < 0 || t > 1 {
			s.fail(w, http.StatusBadRequest, "threshold must be a number from 0 to 1")
			return
		}
		threshold = t
	}
	if strings.TrimSpace(text) == "" {
		s.fail(w, http.StatusBadRequest, "paste a page's text to search for")
		return
	}
	page := query.Page{Content: text, HTML: r.PostForm.Get("html") == "on"}
	matches, err := s.ix.Text(r.Context(), page, threshold, maxMatches, false)
	if errors.Is(err, query.ErrNoSketch) {
		s.fail(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	if err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	s.render(w, "matches.html", http.StatusOK, map[string]any{"Title": "Search", "Dir": s.ix.Dir, "Matches": matches, "Threshold": threshold, "Limit": maxMatches})
}

func (s *server) clusters(w http.ResponseWriter, r *http.Request) {
	page := int64(1)
	if v := r.URL.Query().Get("page"); v != "" {
		var ok bool
		if page, ok = s.intParam(w, "page", v); !ok {
			return
		}
		if page < 1 || page > 1<<30 {
			s.fail(w, http.StatusBadRequest, "page must be 1 or more")
			return
		}
	}
	ctx := r.Context()
	list, n, err := s.ix.Clusters(ctx, int(page-1)*pageSize, pageSize)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	listed, err := s.ix.Listed(ctx)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	pages := (listed + pageSize - 1) / pageSize
	s.render(w, "clusters.html", http.StatusOK, map[string]any{"Title": "Clusters", "Dir": s.ix.Dir, "Clusters": list, "Total": n,
		"Listed": listed, "Page": int(page), "Pages": pages, "First": int(page-1)*pageSize + 1})
}

func (s *server) cluster(w http.ResponseWriter, r *http.Request) {
	id, ok := s.intParam(w, "cluster ID", r.PathValue("id"))
	if !ok {
		return
	}
	page := int64(1)
	if v := r.URL.Query().Get("page"); v != "" {
		if page, ok = s.intParam(w, "page", v); !ok {
			return
		}
		if page < 1 || page > 1<<30 {
			s.fail(w, http.StatusBadRequest, "page must be 1 or more")
			return
		}
	}
	c, members, total, found, err := s.ix.ClusterPage(r.Context(), id, int(page-1)*memberPage, memberPage)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !found {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("no cluster %d", id))
		return
	}
	pages := (total + memberPage - 1) / memberPage
	s.render(w, "cluster.html", http.StatusOK, map[string]any{"Title": fmt.Sprintf("Cluster %d", id), "Dir": s.ix.Dir, "Cluster": c, "Members": members,
		"Page": int(page), "Pages": pages, "First": int(page-1)*memberPage + 1})
}

func (s *server) doc(w http.ResponseWriter, r *http.Request) {
	id, ok := s.intParam(w, "doc ID", r.PathValue("id"))
	if !ok {
		return
	}
	d, found, err := s.ix.Doc(r.Context(), id)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !found {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("no document %d", id))
		return
	}
	text, err := s.ix.TextOf(r.Context(), id)
	if err != nil {
		text = ""
	}
	s.render(w, "doc.html", http.StatusOK, map[string]any{"Title": fmt.Sprintf("Doc %d", id), "Dir": s.ix.Dir, "Doc": d, "Text": text, "TextError": errString(err)})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// piece is a run of a text, marked when the other document shares it.
type piece struct {
	Text   string
	Shared bool
}

// pieces cuts text at the spans.
func pieces(text string, spans []query.Span) []piece {
	var out []piece
	at := 0
	for _, sp := range spans {
		if sp.Start > at {
			out = append(out, piece{text[at:sp.Start], false})
		}
		out = append(out, piece{text[sp.Start:sp.End], true})
		at = sp.End
	}
	if at < len(text) {
		out = append(out, piece{text[at:], false})
	}
	return out
}

func (s *server) compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, ok := s.intParam(w, "a", q.Get("a"))
	if !ok {
		return
	}
	b, ok := s.intParam(w, "b", q.Get("b"))
	if !ok {
		return
	}
	ctx := r.Context()
	da, okA, errA := s.ix.Doc(ctx, a)
	db, okB, errB := s.ix.Doc(ctx, b)
	if err := errors.Join(errA, errB); err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !okA || !okB {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("no document %d or %d", a, b))
		return
	}
	ta, errA := s.ix.TextOf(ctx, a)
	tb, errB := s.ix.TextOf(ctx, b)
	if err := errors.Join(errA, errB); err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	inA, inB := s.ix.SharedSpans(ta, tb)
	sim, err := s.ix.Similar(ctx, a, b)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.render(w, "compare.html", http.StatusOK, map[string]any{"Title": fmt.Sprintf("Doc %d and doc %d", a, b), "Dir": s.ix.Dir,
		"A": da, "B": db, "PiecesA": pieces(ta, inA), "PiecesB": pieces(tb, inB), "Sim": sim})
}

// Serve runs the app on addr until ctx is done.
func Serve(ctx context.Context, addr string, ix *query.Index) error {
	srv := Server(addr, Handler(ix))
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}
