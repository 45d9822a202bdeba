"""tempanon: release temporal data so that nobody can be re-identified.

Four published systems behind one API:

* :func:`tempanon.kanon.kanonymize` -- full-domain k-anonymity with Incognito
  (LeFevre, DeWitt, Ramakrishnan, SIGMOD 2005), optionally respondent-level (``uid``).
* :mod:`tempanon.temporal` -- k-anonymity for timestamped data by time granularities
  (Mascetti, Bettini, Wang, Jajodia, TIME 2006).
* :mod:`tempanon.stream` -- the reposition model for streams of snapshots
  (Wang, Xu, Wong, Fu, ICDM 2010).
* :mod:`tempanon.timeseries` -- (k,P)-anonymity for time series
  (Shou, Shang, Chen, Chen, Zhang, TKDE).
"""

from tempanon.errors import InputError, NoSolutionError, TempanonError, VerificationError

__version__ = "0.1.0"

__all__ = ["InputError", "NoSolutionError", "TempanonError", "VerificationError", "__version__"]
