//! Frames: host state cells, trust, the standard projections, and frame compilation.
