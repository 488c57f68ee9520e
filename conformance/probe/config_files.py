"""Configuration files a harness reads, written from templates before each process.

``--config-template SRC:DEST`` (docs/probe.md, "Configuration files"): SRC
is a file holding ``{base_url}``, ``{api_key}``, ``{model}`` and
``{workdir}`` wherever the harness's configuration wants them; before each
process the probe writes it to DEST (placeholders filled there too; a
relative DEST is under the working folder) with the fake's base URL, that
process's fresh API key, the model and the working folder. Only those four
names are replaced, so JSON, TOML or YAML braces stay as they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reqfold.conformance.probe.styles import fill_all

TEMPLATE_NAMES = ("base_url", "api_key", "model", "workdir")


@dataclass(frozen=True, slots=True)
class ConfigTemplate:
    """One template: its text and where it goes."""

    source: str
    text: str
    destination: str


def parse_config_template(spec: str) -> ConfigTemplate:
    """``SRC:DEST``, SRC read now; ValueError says what is wrong."""
    source, sep, destination = spec.partition(":")
    if not sep or not source or not destination:
        raise ValueError(
            f"--config-template {spec!r}: give SRC:DEST (a template file and where"
            " the harness reads it)"
        )
    try:
        text = Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise ValueError(
            f"--config-template {source!r} cannot be read: {reason}"
        ) from None
    return ConfigTemplate(source, text, destination)


def render(template: ConfigTemplate, values: Mapping[str, str]) -> tuple[str, str]:
    """The destination path and the text, placeholders filled (pure)."""
    known = {name: values[name] for name in TEMPLATE_NAMES if name in values}
    destination = fill_all(template.destination, known)
    if not os.path.isabs(destination):
        destination = os.path.join(values["workdir"], destination)
    return destination, fill_all(template.text, known)


def write_config_files(
    templates: tuple[ConfigTemplate, ...], values: Mapping[str, str]
) -> list[str]:
    """Write every template; returns the paths written (OSError propagates)."""
    written = []
    for template in templates:
        destination, text = render(template, values)
        Path(destination).parent.mkdir(parents=True, exist_ok=True)
        Path(destination).write_text(text, encoding="utf-8")
        written.append(destination)
    return written
