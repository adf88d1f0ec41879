package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// chartFiles is .Files: the chart's files outside templates/, by path
// relative to the chart (helm leaves out templates/, Chart.yaml and values).
type chartFiles map[string]string

// Get returns a file's content, or "" when there is none, as helm does.
func (f chartFiles) Get(name string) string { return f[name] }

func loadFiles(dir string) (chartFiles, error) {
	files := chartFiles{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "templates" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "Chart.yaml" || rel == "values.yaml" || strings.HasPrefix(rel, ".") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	return files, err
}
