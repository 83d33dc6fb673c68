"""Node configuration profiles (read, write, read_write, scan, default) as YAML files in this
package, validated on load and rendered to HBase settings. See profiles/loader.py."""
from profiles.loader import (
    MAX_HEAP_SHARE, PROFILE_DIR, WARN_HEAP_SHARE, NodeProfile, ProfileError, ProfileOverride,
    load_profile, load_profiles, parse_profile, plan_table_profiles, recommend_block_sizes,
    render_block_size, render_hbase_settings, shipped_profiles, with_overrides,
)

__all__ = ["MAX_HEAP_SHARE", "PROFILE_DIR", "WARN_HEAP_SHARE", "NodeProfile", "ProfileError",
           "ProfileOverride", "with_overrides",
           "load_profile", "load_profiles", "parse_profile", "plan_table_profiles",
           "recommend_block_sizes", "render_block_size", "render_hbase_settings",
           "shipped_profiles"]
