"""Horovod's exception names. HorovodInternalError is KoloInternalError
itself (not a subclass), so `except HorovodInternalError` catches every
failure Kolo raises, as elastic training scripts rely on."""

from kolo.common.exceptions import HostsUpdatedInterrupt, KoloInternalError

HorovodInternalError = KoloInternalError

__all__ = ["HorovodInternalError", "HostsUpdatedInterrupt"]
