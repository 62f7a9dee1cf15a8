"""A grader for CUDA challenge submissions.

The pipeline, one module per stage: spec -> build -> run -> check -> timing -> report.
`grader.pipeline.grade` strings them together.
"""

__version__ = "0.1.0"
