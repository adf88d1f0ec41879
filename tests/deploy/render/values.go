package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// loadChartMeta reads Chart.yaml into the .Chart object: helm exposes its
// keys with a capital first letter (name -> .Chart.Name, appVersion ->
// .Chart.AppVersion).
func loadChartMeta(path string) (map[string]interface{}, error) {
	raw, err := readYAMLMap(path)
	if err != nil {
		return nil, err
	}
	meta := map[string]interface{}{}
	for k, v := range raw {
		r := []rune(k)
		r[0] = unicode.ToUpper(r[0])
		meta[string(r)] = v
	}
	if _, ok := meta["Name"].(string); !ok {
		return nil, fmt.Errorf("%s: no name", path)
	}
	return meta, nil
}

func readYAMLMap(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// readValuesFile reads a values file as helm does: YAML converted to JSON and
// back, so every number is a float64 (a template that needs an integer must
// say `int`, and helm fails where it does not; so must this renderer).
func readValuesFile(path string) (map[string]interface{}, error) {
	m, err := readYAMLMap(path)
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	values := map[string]interface{}{}
	if err := json.Unmarshal(text, &values); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return values, nil
}

// loadValues layers the overrides over the chart's values.yaml.
func loadValues(dir string, o overrides) (map[string]interface{}, error) {
	values, err := readValuesFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range o.files {
		extra, err := readValuesFile(f)
		if err != nil {
			return nil, err
		}
		mergeInto(values, extra)
	}
	for _, s := range o.sets {
		if err := setPath(values, s, typedValue); err != nil {
			return nil, err
		}
	}
	for _, s := range o.setStrings {
		if err := setPath(values, s, func(v string) interface{} { return v }); err != nil {
			return nil, err
		}
	}
	for _, s := range o.setFiles {
		err := setPath(values, s, func(path string) interface{} {
			data, readErr := os.ReadFile(path)
			if readErr != nil {
				return readErr
			}
			return string(data)
		})
		if err != nil {
			return nil, err
		}
	}
	return values, nil
}

// mergeInto merges src over dst: maps merge key by key, anything else replaces.
func mergeInto(dst, src map[string]interface{}) {
	for k, v := range src {
		sub, isMap := v.(map[string]interface{})
		old, oldIsMap := dst[k].(map[string]interface{})
		if isMap && oldIsMap {
			mergeInto(old, sub)
			continue
		}
		dst[k] = v
	}
}

// typedValue types a --set value as helm does for the cases the chart uses:
// true/false, null, integers; everything else is a string.
func typedValue(v string) interface{} {
	switch v {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return i
	}
	return v
}

// setPath applies one `a.b.c=value` override. Unlike helm, a comma does not
// separate several overrides: pass --set once for each (the seed's key
// values hold no commas, but ssh keys may hold other punctuation).
func setPath(values map[string]interface{}, spec string, convert func(string) interface{}) error {
	key, raw, ok := strings.Cut(spec, "=")
	if !ok || key == "" {
		return fmt.Errorf("override %q is not key=value", spec)
	}
	value := convert(raw)
	if err, isErr := value.(error); isErr {
		return fmt.Errorf("override %q: %v", key, err)
	}
	parts := strings.Split(key, ".")
	node := values
	for _, p := range parts[:len(parts)-1] {
		next, ok := node[p].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			node[p] = next
		}
		node = next
	}
	node[parts[len(parts)-1]] = value
	return nil
}
