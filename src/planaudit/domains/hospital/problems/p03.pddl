;; An isolation patient arrives; the isolation bed is taken.
(define (problem hospital-p03)
  (:domain hospital)
  (:objects
    medicine surgery - ward
    b1 b2 b3 - bed
    p1 p2 - patient)
  (:init
    (in-ward b1 medicine) (in-ward b2 medicine)
    (in-ward b3 surgery)
    (isolation-bed b2) (isolation-bed b3)
    (suits medicine p1) (needs-isolation p1)
    (suits medicine p2)
    (waiting p1)
    (in-bed p2 b2) (admitted p2)
    (free b3)
    (dirty b1)
    (= (total-cost) 0))
  (:goal (and
    (admitted p1)
    (admitted p2)))
  (:metric minimize (total-cost)))
