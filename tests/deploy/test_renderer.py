"""The test-only renderer itself, on a small chart made here: values layered as
helm layers them (values.yaml, -f, --set typed, --set-string, --set-file),
helm's functions (include, tpl, toYaml, required, lookup) next to sprig's,
partials not rendered, missing values empty, errors as one line and exit 1.
The chart tests trust it, so it must fail where helm fails."""

import subprocess
import textwrap

import pytest
import yaml

TEMPLATES = {
    "_helpers.tpl": '{{- define "t.name" -}}{{ .Release.Name }}-{{ .Chart.Name }}{{- end -}}\n',
    "cm.yaml": textwrap.dedent(
        """\
        kind: ConfigMap
        apiVersion: v1
        metadata:
          name: {{ include "t.name" . }}
          namespace: {{ .Release.Namespace }}
        data:
          count: {{ .Values.count | quote }}
          countKind: {{ kindOf .Values.count }}
          fileNumberKind: {{ kindOf .Values.nested.number }}
          flag: {{ kindOf .Values.flag }}
          str: {{ kindOf .Values.str }}
          nested: {{ .Values.nested.inner | quote }}
          kept: {{ .Values.nested.kept | quote }}
          file: {{ .Values.file | quote }}
          missing: "{{ .Values.nothing }}"
          tpl: {{ tpl .Values.templated . | quote }}
          found: {{ lookup "v1" "Secret" "ns" "x" | len | quote }}
          shell: {{ .Files.Get "files/hello.sh" | trim | quote }}
          chartVersion: {{ .Chart.Version | quote }}
          upper: {{ .Values.str | upper | quote }}
          yaml: |
            {{- toYaml .Values.nested | nindent 4 }}
          req: {{ required "need str" .Values.str | quote }}
        """
    ),
}


@pytest.fixture
def chart(tmp_path):
    root = tmp_path / "t"
    (root / "templates").mkdir(parents=True)
    (root / "files").mkdir()
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: t\nversion: 1.2.3\n")
    (root / "values.yaml").write_text(
        "count: 1\nflag: false\nstr: abc\nnested: {inner: a, kept: k, number: 2}\nfile: ''\ntemplated: '{{ .Release.Name }}!'\n"
    )
    (root / "files" / "hello.sh").write_text("echo hi\n")
    for name, text in TEMPLATES.items():
        (root / "templates" / name).write_text(text)
    return root


def run(renderer, chart, *args):
    return subprocess.run(
        [str(renderer), "--name", "rel", "--namespace", "ns", *args, str(chart)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_values_layers_and_functions(renderer, chart, tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text("nested: {inner: from-file}\n")
    content = tmp_path / "content.txt"
    content.write_text("line 1\nline 2\n")
    result = run(
        renderer, chart,
        "-f", str(extra),
        "--set", "count=7",
        "--set", "flag=true",
        "--set-string", "str=123",
        "--set-file", f"file={content}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("---\n# Source: t/templates/cm.yaml\n")
    assert "_helpers" not in result.stdout
    cm = yaml.safe_load(result.stdout)
    assert cm["metadata"] == {"name": "rel-t", "namespace": "ns"}
    d = cm["data"]
    assert (d["count"], d["countKind"], d["flag"], d["str"]) == ("7", "int64", "bool", "string")
    assert d["fileNumberKind"] == "float64"  # as helm reads values files, through JSON
    assert (d["nested"], d["kept"]) == ("from-file", "k")  # -f merges, it does not replace
    assert d["file"] == "line 1\nline 2\n"
    assert d["missing"] == ""  # helm prints nothing for a missing value, not "<no value>"
    assert d["tpl"] == "rel!"
    assert d["found"] == "0"
    assert d["shell"] == "echo hi"
    assert d["chartVersion"] == "1.2.3"
    assert d["upper"] == "123"
    assert yaml.safe_load(d["yaml"]) == {"inner": "from-file", "kept": "k", "number": 2}


def test_required_fails_with_its_message(renderer, chart):
    result = run(renderer, chart, "--set", "str=")
    assert result.returncode == 1 and result.stdout == ""
    assert "need str" in result.stderr and len(result.stderr.splitlines()) == 1


def test_bad_arguments_exit_2(renderer, chart):
    assert run(renderer, chart, "--set", "novalue").returncode == 1
    result = subprocess.run([str(renderer)], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (2, "render: expected one chart directory\n")
