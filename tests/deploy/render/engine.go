package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"gopkg.in/yaml.v3"
)

// renderTemplates parses every file under templates/ into one set, as helm
// does (so a helper defined in _helpers.tpl is visible everywhere), and
// executes each file whose name does not start with "_".
func renderTemplates(dir, chartName string, top map[string]interface{}) (map[string]string, error) {
	root := template.New(chartName)
	root.Funcs(funcMap(root)).Option("missingkey=zero")
	var names []string
	tdir := filepath.Join(dir, "templates")
	err := filepath.WalkDir(tdir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		name := chartName + "/" + filepath.ToSlash(rel)
		if _, err := root.New(name).Parse(string(data)); err != nil {
			return err
		}
		if !strings.HasPrefix(filepath.Base(path), "_") {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range names {
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, top); err != nil {
			return nil, err
		}
		// missingkey=zero prints "<no value>" for a missing key; helm prints nothing.
		out[name] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}

// funcMap is sprig's functions plus helm's own (include, tpl, toYaml,
// fromYaml, required, lookup), less env and expandenv, which helm removes so that
// a chart renders the same on every machine.
func funcMap(root *template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := root.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		if _, err := t.New("tpl").Parse(text); err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = t.ExecuteTemplate(&buf, "tpl", data)
		return strings.ReplaceAll(buf.String(), "<no value>", ""), err
	}
	f["toYaml"] = toYAML
	f["fromYaml"] = func(text string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(text), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	// Like `helm template`, the renderer reaches no cluster: lookup finds nothing.
	f["lookup"] = func(apiVersion, kind, namespace, name string) map[string]interface{} {
		return map[string]interface{}{}
	}
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return nil, errors.New(msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return nil, errors.New(msg)
		}
		return v, nil
	}
	return f
}

// toYAML prints a value as helm's toYaml does: two-space indentation, no
// trailing newline (templates place it with nindent), "" for errors.
func toYAML(v interface{}) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("toYaml error: %v", err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
