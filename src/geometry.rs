//! Plane projective geometry in `f64`: the [`Homography`] that maps a board's plane to a
//! photo (`board::pose`) or a slanted page to a straight one (`sheet::layout`,
//! `vision::warp_page`), and the 3 × 3 helpers behind it. No pixels, no I/O.

use serde::Serialize;

/// Relative size under which a homogeneous coordinate, determinant or area counts as zero.
pub(crate) const EPS: f64 = 1e-12;
/// Three points whose triangle is smaller than this share of the squared extent of the
/// point set count as collinear.
const COLLINEAR_TOL: f64 = 1e-9;

pub(crate) type Mat3 = [[f64; 3]; 3];
pub(crate) type Vec3 = [f64; 3];

/// A projective map of the plane (a board's plane to a photo, a slanted page to a straight
/// one), as a 3 × 3 matrix acting on `(x, y, 1)`.
///
/// Built by [`Homography::from_points`], the matrix has unit Frobenius norm and its sign puts
/// the source points in front (positive `w`), so that [`Homography::apply`] can tell a
/// board-plane point behind the camera from one in front of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Homography(pub [[f64; 3]; 3]);

impl Homography {
    /// The map that leaves every point where it is.
    pub const IDENTITY: Homography =
        Homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);

    /// The homography that maps each `src[i]` (board plane `(x, y)`) to `dst[i]` (image): the
    /// exact four-point solution (the minimal case of the DLT), found by mapping the
    /// projective basis onto each point set.
    ///
    /// `None` when either point set is degenerate (three of the four points collinear, or a
    /// value not finite), or when no one sign of the matrix puts all four points in front —
    /// the destination quad is crossed, which no camera can see of a plane in front of it.
    pub fn from_points(src: &[[f64; 2]; 4], dst: &[[f64; 2]; 4]) -> Option<Homography> {
        let from_basis_src = basis(src)?;
        let from_basis_dst = basis(dst)?;
        let m = mul(&from_basis_dst, &inverse(&from_basis_src)?);
        let n = frobenius(&m);
        if !above(n, 0.0) || !n.is_finite() {
            return None;
        }
        let mut m = scale(&m, 1.0 / n);
        let w_sum: f64 = src.iter().map(|&p| w_of(&m, p)).sum();
        if w_sum < 0.0 {
            m = scale(&m, -1.0);
        }
        let h = Homography(m);
        src.iter().all(|&p| h.apply(p).is_some()).then_some(h)
    }

    /// Map a point. `None` when it maps to infinity (`w` ≈ 0) or lies behind (`w` < 0: for a
    /// board-to-image homography, a board-plane point behind the camera), or when the input
    /// is not finite.
    pub fn apply(&self, p: [f64; 2]) -> Option<[f64; 2]> {
        let m = &self.0;
        let w = w_of(m, p);
        let size = (m[2][0] * p[0]).abs() + (m[2][1] * p[1]).abs() + m[2][2].abs();
        if !above(w, EPS * size) {
            return None;
        }
        let x = (m[0][0] * p[0] + m[0][1] * p[1] + m[0][2]) / w;
        let y = (m[1][0] * p[0] + m[1][1] * p[1] + m[1][2]) / w;
        (x.is_finite() && y.is_finite()).then_some([x, y])
    }

    /// This map followed by `next` (the matrix product `next · self`).
    pub fn then(&self, next: &Homography) -> Homography {
        Homography(mul(&next.0, &self.0))
    }

    /// The inverse map (for a board's homography: image → board plane), scaled to unit
    /// Frobenius norm. The sign is the true inverse's, so points that were in front stay in
    /// front. `None` when singular.
    pub fn inverse(&self) -> Option<Homography> {
        let inv = inverse(&self.0)?;
        let n = frobenius(&inv);
        (n > 0.0 && n.is_finite()).then(|| Homography(scale(&inv, 1.0 / n)))
    }
}

/// The matrix whose columns are the first three points (homogeneous) scaled so that they
/// sum to the fourth: it maps the projective basis `e1, e2, e3, (1, 1, 1)` onto the points.
/// `None` when three of the points are collinear or a value is not finite.
fn basis(p: &[[f64; 2]; 4]) -> Option<Mat3> {
    if p.iter().flatten().any(|v| !v.is_finite()) {
        return None;
    }
    let mut extent: f64 = 0.0;
    for i in 0..4 {
        for j in i + 1..4 {
            extent = extent.max((p[i][0] - p[j][0]).hypot(p[i][1] - p[j][1]));
        }
    }
    for (i, j, k) in [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)] {
        let area =
            (p[j][0] - p[i][0]) * (p[k][1] - p[i][1]) - (p[j][1] - p[i][1]) * (p[k][0] - p[i][0]);
        if !above(area.abs(), COLLINEAR_TOL * extent * extent) {
            return None;
        }
    }
    let a = [
        [p[0][0], p[1][0], p[2][0]],
        [p[0][1], p[1][1], p[2][1]],
        [1.0, 1.0, 1.0],
    ];
    let l = solve(a, [p[3][0], p[3][1], 1.0])?;
    Some([0, 1, 2].map(|i| [0, 1, 2].map(|j| a[i][j] * l[j])))
}

/// Solve `a · x = b` by Gaussian elimination with partial pivoting; `None` when singular.
fn solve(mut a: Mat3, mut b: Vec3) -> Option<Vec3> {
    let size = frobenius(&a);
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if !above(a[pivot][col].abs(), EPS * size) {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..3 {
            let k = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (v, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *v -= k * p;
            }
            b[row] -= k * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let s: f64 = (row + 1..3).map(|j| a[row][j] * x[j]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The inverse by the adjugate; `None` when the determinant is negligible.
fn inverse(m: &Mat3) -> Option<Mat3> {
    let c = |i: usize, j: usize| {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
        m[i1][j1] * m[i2][j2] - m[i1][j2] * m[i2][j1]
    };
    let det = m[0][0] * c(0, 0) + m[0][1] * c(0, 1) + m[0][2] * c(0, 2);
    let n = frobenius(m);
    if !above(det.abs(), EPS * n * n * n) || !det.is_finite() {
        return None;
    }
    Some([0, 1, 2].map(|i| [0, 1, 2].map(|j| c(j, i) / det)))
}

/// `v > floor`, false when either is NaN (so a NaN fails every check it meets).
pub(crate) fn above(v: f64, floor: f64) -> bool {
    v > floor
}

/// The homogeneous coordinate `w` of `m · (x, y, 1)`.
pub(crate) fn w_of(m: &Mat3, p: [f64; 2]) -> f64 {
    m[2][0] * p[0] + m[2][1] * p[1] + m[2][2]
}

pub(crate) fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

pub(crate) fn mul_vec(a: &Mat3, v: Vec3) -> Vec3 {
    a.map(|row| row[0] * v[0] + row[1] * v[1] + row[2] * v[2])
}

pub(crate) fn scale(m: &Mat3, k: f64) -> Mat3 {
    m.map(|row| row.map(|v| v * k))
}

pub(crate) fn frobenius(m: &Mat3) -> f64 {
    m.iter().flatten().map(|v| v * v).sum::<f64>().sqrt()
}

pub(crate) fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(crate) fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(crate) fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(crate) fn norm(a: Vec3) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// `a` scaled to unit length; `None` when it is (nearly) zero.
pub(crate) fn unit(a: Vec3) -> Option<Vec3> {
    let n = norm(a);
    (n > EPS && n.is_finite()).then(|| a.map(|v| v / n))
}
