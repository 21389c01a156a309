"""Reports people read: one assembled view of a run, rendered five ways (M1-M3).

Inputs (envelopes from files, a directory, a run's ConfigMap sinks, or a bare-host
``run.json``) are assembled once into a :class:`Report`; JUnit, HTML, Markdown,
NVVS-schema JSON and CTRF each render that view and nothing else, so they cannot
disagree. Nothing is fabricated: what the input did not say is left out or stated.
"""

from glimmer.report.assemble import assemble
from glimmer.report.localrun import load_run_json
from glimmer.report.model import Report, ResultView
from glimmer.report.reading import ReportInputError
from glimmer.report.render import FORMATS, render
from glimmer.report.sources import from_file, from_results_dir

__all__ = [
    "FORMATS",
    "Report",
    "ReportInputError",
    "ResultView",
    "assemble",
    "from_file",
    "from_results_dir",
    "load_run_json",
    "render",
]
