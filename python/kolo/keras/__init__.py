"""kolo.keras: placeholder until the Keras API lands (branch keras23)."""

from kolo.keras import elastic  # noqa: F401
