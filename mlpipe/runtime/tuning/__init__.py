"""Tuning a parallel step from a local run: its profile (:mod:`.profile`), the scheduler
replayed over its attempts at other settings (:mod:`.simulate`), the cloud run on Azure VM
sizes (:mod:`.cloud`, ``vm_sizes.json``) and the advice drawn from them (:mod:`.advice`),
shown by ``mlpipe job advise``, job_result.txt and report.html (docs/advise.md).
"""
