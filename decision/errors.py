"""BadInput, re-exported from the neutral `common` package (where it is defined) so existing
`from decision.errors import BadInput` keeps working."""
from common.errors import BadInput

__all__ = ["BadInput"]
