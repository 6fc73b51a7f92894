import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from biasbook import plotting  # noqa: E402


def test_choropleth_colours_known_countries_and_reports_the_rest():
    ax = plotting.world_choropleth({"FR": 1.0, "DE": 2.0, "XX": 3.0, "NO": np.nan})
    assert ax.missing_codes == ["NO", "XX"]  # unknown code and a NaN value are both reported
    faces = ax.collections[0].get_facecolors()
    grey = np.array([0.85, 0.85, 0.85, 1.0])
    assert sum(not np.allclose(f, grey) for f in faces) >= 2


def test_choropleth_refuses_codes_it_cannot_draw():
    with pytest.raises(ValueError, match="alpha-2"):
        plotting.world_choropleth({"FRA": 1.0})


def test_shapes_have_plausible_coordinates():
    france = plotting.country_shapes()["FR"]
    lon, lat = np.concatenate(france["parts"]).T
    assert -6 < np.median(lon) < 10 and 40 < np.median(lat) < 52  # metropolitan France dominates
