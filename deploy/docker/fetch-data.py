#!/usr/bin/python3
"""fetch-data.py URL DIR: puts the training data at URL into DIR, once.

s3://bucket/prefix/ copies every object under the prefix from S3-compatible
storage (S3_ENDPOINT_URL, empty for AWS; credentials from AWS_* variables, as
boto3 reads them). http(s)://.../file is downloaded; a .tar.gz/.tgz/.tar/.zip
is unpacked into DIR. A completed fetch leaves DIR/.kolo-fetched naming the
URL, so a restarted container does not fetch again; a lock lets containers
that share DIR (one volume) fetch it once between them.
"""

import fcntl
import os
import pathlib
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request

MARKER = ".kolo-fetched"
ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")


def fetch_s3(url, target):
    import boto3  # Debian's python3-boto3; only S3 users need it

    parts = urllib.parse.urlparse(url)
    bucket, prefix = parts.netloc, parts.path.lstrip("/")
    endpoint = os.environ.get("S3_ENDPOINT_URL") or None
    client = boto3.client("s3", endpoint_url=endpoint)
    count = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            key = item["Key"]
            if key.endswith("/"):
                continue
            local = target / os.path.relpath(key, prefix or ".")
            local.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(bucket, key, str(local))
            count += 1
    if count == 0:
        raise RuntimeError(f"no objects under {url}")


def fetch_http(url, target):
    name = pathlib.PurePosixPath(urllib.parse.urlparse(url).path).name or "data"
    with tempfile.TemporaryDirectory(dir=target) as scratch:
        download = pathlib.Path(scratch) / name
        with urllib.request.urlopen(url, timeout=60) as response, open(download, "wb") as out:
            shutil.copyfileobj(response, out)
        if name.endswith(ARCHIVES):
            shutil.unpack_archive(str(download), str(target))
        else:
            shutil.move(str(download), str(target / name))


def main(argv):
    if len(argv) != 3:
        print("usage: fetch-data.py URL DIR", file=sys.stderr)
        return 2
    url, target = argv[1], pathlib.Path(argv[2])
    scheme = urllib.parse.urlparse(url).scheme
    fetchers = {"s3": fetch_s3, "http": fetch_http, "https": fetch_http}
    if scheme not in fetchers:
        print(f"fetch-data.py: DATA_URL must be s3://, http:// or https://, not '{url}'", file=sys.stderr)
        return 2
    marker = target / MARKER
    with open(target / ".kolo-fetch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and marker.read_text().strip() == url:
            print(f"fetch-data.py: {target} already holds {url}", file=sys.stderr)
            return 0
        try:
            fetchers[scheme](url, target)
        except Exception as error:  # one line for the user, whatever failed
            print(f"fetch-data.py: cannot fetch {url}: {type(error).__name__}: {error}", file=sys.stderr)
            return 1
        marker.write_text(url + "\n")
    print(f"fetch-data.py: fetched {url} into {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
