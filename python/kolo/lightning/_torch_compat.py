"""Lets Lightning import on Debian 12's torch 1.13 under Python 3.11.

Every Lightning 2.x imports torch.distributed.fsdp at start-up, and torch
1.13's torch/distributed/_shard/sharded_tensor/metadata.py declares a
dataclass field whose default is another (unhashable) dataclass instance,
which Python 3.11's dataclasses reject with "mutable default ... use
default_factory". torch 2.0 changed that one field to a default_factory.
This module makes the same one-line change while that single module is
imported, and only when its source still has the old line, so a fixed torch
is loaded untouched. It must be installed before Lightning is imported.
"""

import importlib.abc
import importlib.machinery
import sys

_MODULE = "torch.distributed._shard.sharded_tensor.metadata"
_OLD = "field(default=TensorProperties())"
_NEW = "field(default_factory=TensorProperties)"


class _MetadataFixer(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Loads _MODULE from its own file with _OLD replaced by _NEW."""

    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not (spec.origin or "").endswith(".py"):
            return None
        with open(spec.origin, encoding="utf-8") as f:
            if _OLD not in f.read():
                return None  # a torch without the defect: its own loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module):
        origin = module.__spec__.origin
        with open(origin, encoding="utf-8") as f:
            source = f.read().replace(_OLD, _NEW)
        exec(compile(source, origin, "exec"), module.__dict__)


def install():
    """Adds the fixer once; harmless when the module is already imported."""
    if _MODULE in sys.modules or sys.version_info < (3, 11):
        return
    if not any(isinstance(f, _MetadataFixer) for f in sys.meta_path):
        sys.meta_path.insert(0, _MetadataFixer())
