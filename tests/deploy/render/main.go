// Command render is a test-only stand-in for `helm template`: it renders a
// chart with Go's text/template and sprig, the engine Helm itself uses, for
// the features Kolo's chart uses (.Values, .Release, .Chart, .Files, include,
// tpl, toYaml, required, lookup, fail and sprig's functions). Helm itself cannot be
// installed here (it is neither in Debian nor on PyPI), and the tests must
// render the chart with a real template engine, not by reading it.
//
//	render [--name NAME] [--namespace NS] [--notes] [-f values.yaml]... \
//	       [--set key.path=value]... [--set-string k=v]... [--set-file k=path]... CHART_DIR
//
// The rendered objects go to stdout as `helm template` prints them: each
// template's output after "---" and a "# Source:" comment. Errors print one
// line to stderr and exit 1 (2 for bad arguments).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// listFlag collects a repeatable flag's values in order.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	name := flag.String("name", "release", "the release name (.Release.Name)")
	notes := flag.Bool("notes", false, "print the rendered NOTES.txt (what helm install prints) instead of the objects")
	namespace := flag.String("namespace", "default", "the release namespace (.Release.Namespace)")
	var valueFiles, sets, setStrings, setFiles listFlag
	flag.Var(&valueFiles, "f", "a values file merged over values.yaml (repeatable)")
	flag.Var(&sets, "set", "key.path=value, typed as helm --set types it (repeatable)")
	flag.Var(&setStrings, "set-string", "key.path=value, always a string (repeatable)")
	flag.Var(&setFiles, "set-file", "key.path=FILE, the file's content as a string (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "render: expected one chart directory")
		os.Exit(2)
	}
	out, err := renderChart(flag.Arg(0), *name, *namespace, *notes, overrides{valueFiles, sets, setStrings, setFiles})
	if err != nil {
		fmt.Fprintf(os.Stderr, "render: %v\n", err)
		os.Exit(1)
	}
	fmt.Print(out)
}

// overrides are the value sources layered over the chart's values.yaml, in
// helm's order: -f files, then --set, --set-string and --set-file.
type overrides struct {
	files, sets, setStrings, setFiles []string
}

func renderChart(dir, name, namespace string, notes bool, o overrides) (string, error) {
	chart, err := loadChartMeta(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	values, err := loadValues(dir, o)
	if err != nil {
		return "", err
	}
	files, err := loadFiles(dir)
	if err != nil {
		return "", err
	}
	top := map[string]interface{}{
		"Values": values,
		"Chart":  chart,
		"Files":  files,
		"Release": map[string]interface{}{
			"Name": name, "Namespace": namespace, "Service": "Helm",
			"IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
		"Capabilities": map[string]interface{}{
			"KubeVersion": map[string]interface{}{"Version": "v1.30.0", "Major": "1", "Minor": "30"},
		},
	}
	rendered, err := renderTemplates(dir, chart["Name"].(string), top)
	if err != nil {
		return "", err
	}
	// NOTES.txt is what `helm install` prints afterwards, never an object.
	notesName := chart["Name"].(string) + "/templates/NOTES.txt"
	if notes {
		return strings.TrimSpace(rendered[notesName]) + "\n", nil
	}
	names := make([]string, 0, len(rendered))
	for n := range rendered {
		if n != notesName {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		if strings.TrimSpace(rendered[n]) == "" {
			continue // a template switched off by its values renders nothing
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", n, strings.TrimSpace(rendered[n]))
	}
	return b.String(), nil
}
