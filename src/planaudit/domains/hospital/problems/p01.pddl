;; Warm-up: admit one patient.
(define (problem hospital-p01)
  (:domain hospital)
  (:objects
    surgery medicine - ward
    b1 b2 - bed
    p1 - patient)
  (:init
    (in-ward b1 surgery)
    (in-ward b2 medicine)
    (suits surgery p1)
    (waiting p1)
    (free b2)
    (dirty b1)
    (= (total-cost) 0))
  (:goal (and
    (admitted p1)))
  (:metric minimize (total-cost)))
