;; Admit two patients to the medical ward; one needs isolation.
(define (problem hospital-p02)
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
    (waiting p2)
    (free b1) (free b3)
    (blocked b2)
    (= (total-cost) 0))
  (:goal (and
    (admitted p1)
    (admitted p2)))
  (:metric minimize (total-cost)))
