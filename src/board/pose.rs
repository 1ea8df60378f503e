//! Camera geometry for photos of a physical 3D chessboard: from the board's four outer
//! corners in the image to a pinhole camera, and from that camera to where a piece standing
//! on a square shows up in the photo.
//!
//! Input: the board's four outer corners in image pixels, in the order a1, h1, h8, a8, and
//! the image size. Output: a [`Homography`] (board plane → image), a [`Camera`] (focal
//! length, rotation, translation) and, per square, an image box that holds a standing piece
//! ([`square_box`]). Finding the corners in the photo, and deciding which of them is a1,
//! belong to the caller (a caller may try the four rotations; [`Camera::from_homography`]
//! rejects the mirrored orders). This module is plain `f64` geometry: no pixels, no I/O.
//!
//! Coordinates. Board: the unit is one square, the origin is the outer corner of a1's
//! square, x runs along the files a → h (0..8), y along the ranks 1 → 8 (0..8) and z up out
//! of the board. Image: pixels, x right, y down, the origin at the top-left pixel's outer
//! corner. Camera: x right, y down, z forward (the viewing direction).
//!
//! The method: the four corners fix the board-plane homography exactly. A camera with
//! square pixels and its principal point at the image centre leaves one unknown intrinsic,
//! the focal length, which the homography's perspective constrains (the image of the
//! absolute conic, as in Zhang's calibration, with a single unknown). When the board is seen
//! nearly square-on the perspective is too weak to carry the focal length
//! ([`MIN_PERSPECTIVE`]), and a typical phone value ([`DEFAULT_FOCAL`]) is used instead.
//! Rotation and translation then follow from the homography's columns.
//!
//! ```
//! use hamle::board::pose::{square_box, Camera, Homography};
//! // a1, h1, h8, a8 in a 640 × 480 photo taken from White's side.
//! let corners = [[148.0, 400.0], [492.0, 400.0], [430.0, 160.0], [210.0, 160.0]];
//! let h = Homography::from_corners(&corners).unwrap();
//! let cam = Camera::from_homography(&h, 640, 480).unwrap();
//! assert!(cam.elevation_deg() > 30.0 && cam.elevation_deg() < 80.0);
//! // The box for a piece (up to 1.8 squares tall) on e4 reaches above e4's square.
//! let [_, top, _, bottom] = square_box(&cam, 4, 3, 1.8, 0.15).unwrap();
//! let e4_base = h.apply([4.5, 3.5]).unwrap();
//! assert!(top < e4_base[1] as f32 && e4_base[1] as f32 <= bottom);
//! ```

use serde::Serialize;

pub use crate::geometry::Homography;
use crate::geometry::{
    above, add, cross, frobenius, mul_vec, norm, scale, sub, unit, w_of, Mat3, EPS,
};

/// Below this relative spread of depth over the board's corners (`|depth(corner) /
/// depth(centre) − 1|`, largest of the four) the focal length is not estimated: the board is
/// seen nearly square-on, and a pixel of corner error moves the estimate by tens of percent.
/// (A board 350 px wide spreads 2–3 % at 85° elevation, 4–6 % at 80°, 11–16 % at 60°.)
/// Chosen on synthetic views with 1 px of corner error: below 0.06 the estimated focal
/// length put points at piece height further off than a default 30 % wrong did; above it,
/// the estimate did better.
pub const MIN_PERSPECTIVE: f64 = 0.06;
/// Focal length used when it cannot be estimated, in units of the image's longer side
/// (about a phone's main camera: 1.2 ≈ a 45° field of view across the longer side).
pub const DEFAULT_FOCAL: f64 = 1.2;
/// Smallest plausible focal length, in units of the image's longer side (a 118° view).
pub const MIN_FOCAL: f64 = 0.3;
/// Largest plausible focal length, in units of the image's longer side (an 11° view).
pub const MAX_FOCAL: f64 = 5.0;

/// The board's outer corners a1, h1, h8, a8 in board coordinates.
pub const BOARD_CORNERS: [[f64; 2]; 4] = [[0.0, 0.0], [8.0, 0.0], [8.0, 8.0], [0.0, 8.0]];
/// The board's centre in board coordinates.
const BOARD_CENTRE: [f64; 2] = [4.0, 4.0];
/// Smallest depth in front of the camera (squares) that still projects.
const MIN_DEPTH: f64 = 1e-6;

impl Homography {
    /// The homography from the board plane to the image that maps the board's outer corners
    /// a1, h1, h8, a8 — `(0, 0), (8, 0), (8, 8), (0, 8)` — to the four given image points, in
    /// that order. `None` as for [`Homography::from_points`].
    pub fn from_corners(corners: &[[f32; 2]; 4]) -> Option<Homography> {
        let dst = corners.map(|[x, y]| [f64::from(x), f64::from(y)]);
        Homography::from_points(&BOARD_CORNERS, &dst)
    }
}

/// A pinhole camera over the board: square pixels, focal length `f` (pixels), principal
/// point `(cx, cy)` (pixels), and the pose that takes a board point `p` to camera
/// coordinates `r · p + t` (x right, y down, z forward). The columns of `r` are the board's
/// x, y and z axes seen from the camera.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Camera {
    /// Focal length, pixels.
    pub f: f64,
    /// Principal point, pixels.
    pub cx: f64,
    pub cy: f64,
    /// Rotation, board → camera (row-major).
    pub r: [[f64; 3]; 3],
    /// Translation, board → camera (squares): the board origin in camera coordinates.
    pub t: [f64; 3],
    /// Whether `f` was measured from the board's perspective; `false` when it is the
    /// [`DEFAULT_FOCAL`] guess (board seen nearly square-on, or an implausible estimate).
    pub focal_estimated: bool,
}

impl Camera {
    /// Recover the camera from the board-plane homography (board `(x, y)` → image pixels) of
    /// an image `width` × `height`, with the principal point at the image centre
    /// `(width / 2, height / 2)` and an unknown focal length.
    ///
    /// The focal length comes from the two constraints that the board's x and y axes are
    /// orthogonal and of equal length: with the principal point moved to the origin and
    /// `ω = K⁻ᵀK⁻¹ = diag(1/f², 1/f², 1)`, `h1ᵀωh2 = 0` and `h1ᵀωh1 = h2ᵀωh2` are each linear
    /// in `1/f²`, solved together by least squares. When the board is seen nearly square-on
    /// (its depth varies less than [`MIN_PERSPECTIVE`] over the corners, so `f` is not
    /// observable), or the constraints are degenerate, or `f` falls outside
    /// [[`MIN_FOCAL`], [`MAX_FOCAL`]] × the longer side, `f` becomes [`DEFAULT_FOCAL`] × the
    /// longer side and `focal_estimated` is `false`.
    ///
    /// Then `[r1 r2 t] = K⁻¹H / λ` with `λ` the mean length of the first two columns, `r1`
    /// and `r2` made orthonormal symmetrically (neither axis is preferred) and `r3 = r1 × r2`.
    /// With `f` estimated the camera reproduces the homography exactly; with the default it
    /// does to within the small inconsistency a wrong `f` leaves in a near square-on view.
    ///
    /// `None` when the image is empty, the homography is singular or puts a board corner
    /// behind the camera, or the camera centre ends up below the board: the corners were
    /// given in the mirrored rotational sense (e.g. a1, a8, h8, h1), so a caller trying corner
    /// orders can reject those.
    pub fn from_homography(h: &Homography, width: u32, height: u32) -> Option<Camera> {
        if width == 0 || height == 0 {
            return None;
        }
        let (cx, cy) = (f64::from(width) / 2.0, f64::from(height) / 2.0);
        let side = f64::from(width.max(height));
        let n = frobenius(&h.0);
        if !above(n, 0.0) || !n.is_finite() {
            return None;
        }
        // Unit norm, and the sign that puts the board's centre in front.
        let mut hm = scale(&h.0, 1.0 / n);
        let w_centre = w_of(&hm, BOARD_CENTRE);
        if w_centre < 0.0 {
            hm = scale(&hm, -1.0);
        }
        let w_centre = w_centre.abs();
        if !above(w_centre, EPS) {
            return None;
        }
        // w is proportional to depth, so these ratios are the corners' relative depths.
        let mut perspective: f64 = 0.0;
        for p in BOARD_CORNERS {
            let ratio = w_of(&hm, p) / w_centre;
            if !above(ratio, EPS) {
                return None;
            }
            perspective = perspective.max((ratio - 1.0).abs());
        }

        // Principal point to the origin, pixels in units of the longer side.
        let centred = |f: f64| {
            let mut g = hm;
            for j in 0..3 {
                g[0][j] = (hm[0][j] - cx * hm[2][j]) / f;
                g[1][j] = (hm[1][j] - cy * hm[2][j]) / f;
            }
            g
        };
        let estimate = if perspective >= MIN_PERSPECTIVE {
            focal_from(&centred(side)).filter(|f| (MIN_FOCAL..=MAX_FOCAL).contains(f))
        } else {
            None
        };
        let focal_estimated = estimate.is_some();
        let f = estimate.unwrap_or(DEFAULT_FOCAL) * side;

        // K⁻¹H = λ [r1 r2 t].
        let m = centred(f);
        let col = |j: usize| [m[0][j], m[1][j], m[2][j]];
        let lambda = (norm(col(0)) + norm(col(1))) / 2.0;
        if !above(lambda, 0.0) || !lambda.is_finite() {
            return None;
        }
        let a = unit(col(0))?;
        let b = unit(col(1))?;
        // a ± b are orthogonal for unit a, b; rotate them back by 45° to get the
        // orthonormal pair closest to (a, b) in the symmetric sense.
        let p = unit(add(a, b))?;
        let q = unit(sub(a, b))?;
        let s = std::f64::consts::FRAC_1_SQRT_2;
        let r1 = [(p[0] + q[0]) * s, (p[1] + q[1]) * s, (p[2] + q[2]) * s];
        let r2 = [(p[0] - q[0]) * s, (p[1] - q[1]) * s, (p[2] - q[2]) * s];
        let r3 = cross(r1, r2);
        let r = [
            [r1[0], r2[0], r3[0]],
            [r1[1], r2[1], r3[1]],
            [r1[2], r2[2], r3[2]],
        ];
        let t = col(2).map(|v| v / lambda);
        let cam = Camera {
            f,
            cx,
            cy,
            r,
            t,
            focal_estimated,
        };
        (cam.centre()[2] > 0.0).then_some(cam)
    }

    /// Project a board point `(x, y, z)` to image pixels. `None` when it is not in front of
    /// the camera (or not finite).
    pub fn project(&self, p: [f64; 3]) -> Option<[f64; 2]> {
        let c = add(mul_vec(&self.r, p), self.t);
        if !above(c[2], MIN_DEPTH) {
            return None;
        }
        let x = self.f * c[0] / c[2] + self.cx;
        let y = self.f * c[1] / c[2] + self.cy;
        (x.is_finite() && y.is_finite()).then_some([x, y])
    }

    /// The camera's centre in board coordinates (squares): `−rᵀ t`.
    pub fn centre(&self) -> [f64; 3] {
        let r = &self.r;
        let t = self.t;
        [0, 1, 2].map(|j| -(r[0][j] * t[0] + r[1][j] * t[1] + r[2][j] * t[2]))
    }

    /// The camera's elevation above the board plane seen from the board's centre `(4, 4, 0)`,
    /// degrees: 90 is straight down, small values a view along the table.
    pub fn elevation_deg(&self) -> f64 {
        let c = self.centre();
        let horizontal = (c[0] - BOARD_CENTRE[0]).hypot(c[1] - BOARD_CENTRE[1]);
        c[2].atan2(horizontal).to_degrees()
    }
}

/// The image-space axis-aligned box `[x0, y0, x1, y1]` (pixels, not clamped to the image)
/// that holds a piece standing on the square at `file`, `rank` (each 0..8, a1 = (0, 0)).
///
/// The box covers the projections of the square's four corners on the board (z = 0) and of
/// four corners at z = `height` (squares; ~1.6–2.0 covers the tallest piece), inset by
/// `inset` (clamped to 0..=0.5 of a square) because pieces are narrower than their square.
/// That prism is convex, so the box of its 8 projected corners holds all of it.
///
/// `None` when `file` or `rank` is beyond 7, `height` is not finite, or a corner is not in
/// front of the camera.
pub fn square_box(cam: &Camera, file: u8, rank: u8, height: f64, inset: f64) -> Option<[f32; 4]> {
    if file > 7 || rank > 7 || !height.is_finite() {
        return None;
    }
    let inset = if inset.is_nan() {
        0.0
    } else {
        inset.clamp(0.0, 0.5)
    };
    let (x, y) = (f64::from(file), f64::from(rank));
    let mut b = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for (z, d) in [(0.0, 0.0), (height, inset)] {
        for (u, v) in [(d, d), (1.0 - d, d), (1.0 - d, 1.0 - d), (d, 1.0 - d)] {
            let [px, py] = cam.project([x + u, y + v, z])?;
            b = [b[0].min(px), b[1].min(py), b[2].max(px), b[3].max(py)];
        }
    }
    Some(b.map(|v| v as f32))
}

/// `1/f²` from the two absolute-conic constraints on a homography `g` whose principal point
/// is at the origin, then `f` (in `g`'s pixel unit). `None` when the constraints carry no
/// information or give no real focal length.
fn focal_from(g: &Mat3) -> Option<f64> {
    let (a1, b1, c1) = (g[0][0], g[1][0], g[2][0]);
    let (a2, b2, c2) = (g[0][1], g[1][1], g[2][1]);
    // Each constraint reads A · (1/f²) + C = 0.
    let eqs = [
        (a1 * a2 + b1 * b2, c1 * c2),
        (a1 * a1 + b1 * b1 - a2 * a2 - b2 * b2, c1 * c1 - c2 * c2),
    ];
    let aa: f64 = eqs.iter().map(|(a, _)| a * a).sum();
    let ac: f64 = eqs.iter().map(|(a, c)| a * c).sum();
    let size = a1 * a1 + b1 * b1 + a2 * a2 + b2 * b2;
    if !above(aa, EPS * size * size) {
        return None;
    }
    let u = -ac / aa;
    (u > 0.0 && u.is_finite()).then(|| 1.0 / u.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{mul, Vec3};

    const W: u32 = 640;
    const H: u32 = 480;
    const F: f64 = 800.0;
    /// Camera distance from the board centre, squares: the board spans about 350 px.
    const DIST: f64 = 18.0;

    /// A ground-truth camera, kept apart from [`Camera`]: its centre and its right, down and
    /// forward axes in board coordinates.
    struct Truth {
        c: Vec3,
        right: Vec3,
        down: Vec3,
        fwd: Vec3,
    }

    impl Truth {
        /// Looking at the board centre from `elev` degrees above the board, from azimuth `az`
        /// (0: White's side, 90: the h-file side), `dist` squares away, rolled by `roll`
        /// degrees about the viewing direction.
        fn look_at(elev: f64, az: f64, dist: f64, roll: f64) -> Truth {
            let (e, a, r) = (elev.to_radians(), az.to_radians(), roll.to_radians());
            let c = [
                4.0 + dist * e.cos() * a.sin(),
                4.0 - dist * e.cos() * a.cos(),
                dist * e.sin(),
            ];
            let fwd = [4.0 - c[0], 4.0 - c[1], -c[2]].map(|v| v / dist);
            let right0 = [a.cos(), a.sin(), 0.0];
            let down0 = cross(fwd, right0);
            let right = [0, 1, 2].map(|i| r.cos() * right0[i] + r.sin() * down0[i]);
            let down = [0, 1, 2].map(|i| -r.sin() * right0[i] + r.cos() * down0[i]);
            Truth {
                c,
                right,
                down,
                fwd,
            }
        }

        fn project(&self, p: Vec3) -> [f64; 2] {
            let d = sub(p, self.c);
            let dot = |a: Vec3| a[0] * d[0] + a[1] * d[1] + a[2] * d[2];
            let z = dot(self.fwd);
            assert!(z > 0.0, "test point behind the true camera");
            [
                F * dot(self.right) / z + f64::from(W) / 2.0,
                F * dot(self.down) / z + f64::from(H) / 2.0,
            ]
        }

        /// The board's outer corners a1, h1, h8, a8 as seen by this camera.
        fn corners(&self) -> [[f32; 2]; 4] {
            BOARD_CORNERS.map(|[x, y]| self.project([x, y, 0.0]).map(|v| v as f32))
        }
    }

    fn recover(corners: &[[f32; 2]; 4]) -> Option<Camera> {
        let h = Homography::from_corners(corners)?;
        Camera::from_homography(&h, W, H)
    }

    fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
        (a[0] - b[0]).hypot(a[1] - b[1])
    }

    /// Points over the whole board at z = `z`.
    fn grid(z: f64) -> Vec<Vec3> {
        let mut v = Vec::new();
        for i in 0..=8 {
            for j in 0..=8 {
                v.push([f64::from(i), f64::from(j), z]);
            }
        }
        v
    }

    /// Views with enough perspective for the focal length: elevation, azimuth, roll.
    const OBLIQUE: [(f64, f64, f64); 6] = [
        (45.0, 0.0, 0.0),
        (60.0, 0.0, 0.0),
        (45.0, 90.0, 0.0),
        (60.0, 90.0, 4.0),
        (45.0, 30.0, -6.0),
        (60.0, 200.0, 3.0),
    ];

    #[test]
    fn homography_maps_points_like_the_matrix_it_came_from() {
        let truth = [[2.0, 0.3, 100.0], [-0.2, 1.5, 50.0], [0.001, 0.002, 1.0]];
        let map = |p: [f64; 2]| {
            let w = truth[2][0] * p[0] + truth[2][1] * p[1] + truth[2][2];
            [
                (truth[0][0] * p[0] + truth[0][1] * p[1] + truth[0][2]) / w,
                (truth[1][0] * p[0] + truth[1][1] * p[1] + truth[1][2]) / w,
            ]
        };
        let src = [[0.0, 0.0], [8.0, 0.0], [8.0, 8.0], [0.0, 8.0]];
        let h = Homography::from_points(&src, &src.map(map)).unwrap();
        let inv = h.inverse().unwrap();
        for p in [[3.3, 5.1], [0.5, 7.5], [-2.0, 12.0], [8.0, 8.0]] {
            let q = h.apply(p).unwrap();
            assert!(dist2(q, map(p)) < 1e-9, "{p:?} → {q:?}, want {:?}", map(p));
            assert!(dist2(inv.apply(q).unwrap(), p) < 1e-9);
        }
        assert!((frobenius(&h.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn homography_rejects_collinear_and_crossed_quads() {
        let board = BOARD_CORNERS;
        // Three image corners on one line.
        let collinear = [[10.0, 10.0], [20.0, 20.0], [30.0, 30.0], [0.0, 50.0]];
        assert!(Homography::from_points(&board, &collinear).is_none());
        assert!(Homography::from_points(&collinear, &board).is_none());
        assert!(Homography::from_corners(&[[5.0, 5.0]; 4]).is_none());
        // h8 and a8 swapped: a bow tie, no camera sees a board like that.
        let crossed = [
            [100.0, 400.0],
            [500.0, 400.0],
            [150.0, 100.0],
            [450.0, 100.0],
        ];
        assert!(Homography::from_corners(&crossed).is_none());
        let nan = [[f32::NAN, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        assert!(Homography::from_corners(&nan).is_none());
    }

    #[test]
    fn homography_apply_refuses_points_behind_the_camera() {
        let truth = Truth::look_at(30.0, 0.0, DIST, 0.0);
        let h = Homography::from_corners(&truth.corners()).unwrap();
        // On the board, and far beyond it but still in front of the camera.
        for p in [[4.0, 4.0], [1.0, 7.0], [4.0, 60.0]] {
            let want = truth.project([p[0], p[1], 0.0]);
            assert!(dist2(h.apply(p).unwrap(), want) < 1e-3);
        }
        // Far out towards the horizon: still in front, just under the horizon's image.
        let far = h.apply([4.0, 1e9]).unwrap();
        let horizon = f64::from(H) / 2.0 - F * 30f64.to_radians().tan();
        assert!(
            (far[1] - horizon).abs() < 1e-3,
            "{far:?}, horizon at y = {horizon}"
        );
        // The camera stands at y ≈ −11.6, 9 squares up, looking 30° down: board-plane
        // points with y < −16.8 are behind it.
        assert!(h.apply([4.0, -16.0]).is_some());
        assert!(h.apply([4.0, -17.5]).is_none());
        assert!(h.apply([-20.0, -40.0]).is_none());
    }

    #[test]
    fn camera_recovers_focal_length_from_oblique_views() {
        for (elev, az, roll) in OBLIQUE {
            let truth = Truth::look_at(elev, az, DIST, roll);
            let cam = recover(&truth.corners()).unwrap();
            assert!(cam.focal_estimated, "{elev}° / {az}°");
            let err = (cam.f - F).abs() / F;
            assert!(err < 0.02, "{elev}° / {az}°: f = {}, want {F}", cam.f);
        }
    }

    #[test]
    fn camera_projects_raised_points_like_the_true_camera() {
        for (elev, az, roll) in OBLIQUE {
            let truth = Truth::look_at(elev, az, DIST, roll);
            let cam = recover(&truth.corners()).unwrap();
            for p in grid(1.5).into_iter().chain(grid(0.0)) {
                let got = cam.project(p).unwrap();
                let want = truth.project(p);
                assert!(
                    dist2(got, want) < 1.0,
                    "{elev}° / {az}°: {p:?} → {got:?}, want {want:?}"
                );
            }
        }
    }

    #[test]
    fn camera_centre_and_elevation_match_the_truth() {
        for (elev, az, roll) in OBLIQUE {
            let truth = Truth::look_at(elev, az, DIST, roll);
            let cam = recover(&truth.corners()).unwrap();
            let c = cam.centre();
            assert!(norm(sub(c, truth.c)) < 0.05, "{c:?}, want {:?}", truth.c);
            assert!((cam.elevation_deg() - elev).abs() < 0.2);
            // The rotation is orthonormal and right-handed.
            let rt_r = mul(&[0, 1, 2].map(|i| [0, 1, 2].map(|j| cam.r[j][i])), &cam.r);
            for (i, row) in rt_r.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    let want = if i == j { 1.0 } else { 0.0 };
                    assert!((v - want).abs() < 1e-9);
                }
            }
            let r = cam.r;
            let c1 = [r[0][0], r[1][0], r[2][0]];
            let c2 = [r[0][1], r[1][1], r[2][1]];
            let c3 = [r[0][2], r[1][2], r[2][2]];
            assert!(norm(sub(cross(c1, c2), c3)) < 1e-9);
        }
    }

    #[test]
    fn camera_rejects_mirrored_corner_order() {
        for (elev, az, roll) in OBLIQUE
            .into_iter()
            .chain([(85.0, 0.0, 0.0), (90.0, 0.0, 0.0)])
        {
            let truth = Truth::look_at(elev, az, DIST, roll);
            let [a1, h1, h8, a8] = truth.corners();
            assert!(recover(&[a1, h1, h8, a8]).is_some());
            // The same corners in the other rotational sense, from each starting corner.
            assert!(recover(&[a1, a8, h8, h1]).is_none(), "{elev}° / {az}°");
            assert!(recover(&[h1, a1, a8, h8]).is_none(), "{elev}° / {az}°");
            // Rotations in the right sense are a valid (if rotated) board.
            assert!(recover(&[h1, h8, a8, a1]).is_some(), "{elev}° / {az}°");
        }
    }

    #[test]
    fn camera_falls_back_to_the_default_focal_length_seen_from_above() {
        for (elev, az, roll) in [(85.0, 0.0, 0.0), (85.0, 45.0, 5.0), (90.0, 0.0, 0.0)] {
            let truth = Truth::look_at(elev, az, DIST, roll);
            let cam = recover(&truth.corners()).unwrap();
            assert!(!cam.focal_estimated, "{elev}° / {az}°");
            assert_eq!(cam.f, DEFAULT_FOCAL * f64::from(W));
            // Exact straight down, near enough at 85°.
            let tol = if elev == 90.0 { 1e-3 } else { 0.2 };
            for p in grid(0.0) {
                let got = cam.project(p).unwrap();
                let want = truth.project(p);
                assert!(
                    dist2(got, want) < tol,
                    "{elev}°: {p:?} → {got:?}, want {want:?}"
                );
            }
            assert!((cam.elevation_deg() - elev).abs() < 2.0);
        }
    }

    #[test]
    fn camera_tolerates_corner_noise() {
        // Half a pixel of error on each corner, in a fixed pattern.
        let noise = [[0.5, -0.5], [-0.5, 0.5], [0.5, 0.5], [-0.5, -0.5]];
        for (elev, az, roll) in OBLIQUE {
            let truth = Truth::look_at(elev, az, DIST, roll);
            let mut corners = truth.corners();
            for (c, n) in corners.iter_mut().zip(noise) {
                *c = [c[0] + n[0], c[1] + n[1]];
            }
            let cam = recover(&corners).unwrap();
            for p in grid(1.5) {
                let got = cam.project(p).unwrap();
                let want = truth.project(p);
                assert!(
                    dist2(got, want) < 4.0,
                    "{elev}° / {az}°: {p:?} → {got:?}, want {want:?}"
                );
            }
        }
    }

    #[test]
    fn camera_rejects_an_empty_image_and_a_singular_homography() {
        let truth = Truth::look_at(60.0, 0.0, DIST, 0.0);
        let h = Homography::from_corners(&truth.corners()).unwrap();
        assert!(Camera::from_homography(&h, 0, 480).is_none());
        assert!(Camera::from_homography(&Homography([[0.0; 3]; 3]), W, H).is_none());
    }

    #[test]
    fn square_box_holds_the_piece_volume() {
        let truth = Truth::look_at(45.0, 20.0, DIST, 2.0);
        let cam = recover(&truth.corners()).unwrap();
        for (file, rank) in [(0u8, 0u8), (4, 3), (7, 7), (2, 6)] {
            let b = square_box(&cam, file, rank, 1.8, 0.2).unwrap();
            let (x, y) = (f64::from(file), f64::from(rank));
            // The truth's own box over the same eight corners.
            let mut want = [
                f64::INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
            ];
            for (z, d) in [(0.0, 0.0), (1.8, 0.2)] {
                for (u, v) in [(d, d), (1.0 - d, d), (1.0 - d, 1.0 - d), (d, 1.0 - d)] {
                    let [px, py] = truth.project([x + u, y + v, z]);
                    want = [
                        want[0].min(px),
                        want[1].min(py),
                        want[2].max(px),
                        want[3].max(py),
                    ];
                }
            }
            for i in 0..4 {
                assert!(
                    (f64::from(b[i]) - want[i]).abs() < 1.0,
                    "{b:?}, want {want:?}"
                );
            }
            // The axis of a piece standing there is inside, top to bottom.
            for z in [0.0, 0.9, 1.8] {
                let [px, py] = truth.project([x + 0.5, y + 0.5, z]);
                assert!(f64::from(b[0]) <= px && px <= f64::from(b[2]));
                assert!(f64::from(b[1]) <= py && py <= f64::from(b[3]));
            }
            // The top reaches well above the square's own outline.
            let base = square_box(&cam, file, rank, 0.0, 0.0).unwrap();
            assert!(b[1] < base[1] - 10.0);
        }
    }

    #[test]
    fn square_box_refuses_off_board_squares_and_points_behind() {
        let truth = Truth::look_at(45.0, 0.0, DIST, 0.0);
        let cam = recover(&truth.corners()).unwrap();
        assert!(square_box(&cam, 8, 0, 1.8, 0.2).is_none());
        assert!(square_box(&cam, 0, 8, 1.8, 0.2).is_none());
        assert!(square_box(&cam, 0, 0, f64::NAN, 0.2).is_none());
        // A "piece" so tall that its top is behind the camera (up and back over its head).
        assert!(square_box(&cam, 3, 0, 1000.0, 0.2).is_none());
        // An out-of-range inset is clamped: 0.9 acts as 0.5 (the top shrinks to a point).
        assert_eq!(
            square_box(&cam, 3, 3, 1.8, 0.9),
            square_box(&cam, 3, 3, 1.8, 0.5)
        );
    }
}
