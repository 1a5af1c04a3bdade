;; Bed b2 must be taken out of service; one patient goes home.
(define (problem hospital-p04)
  (:domain hospital)
  (:objects
    surgery medicine - ward
    b1 b2 b3 b4 - bed
    p1 p2 p3 - patient)
  (:init
    (in-ward b1 surgery) (in-ward b2 surgery) (in-ward b3 surgery)
    (in-ward b4 medicine)
    (suits surgery p1) (recovered p1)
    (suits surgery p2)
    (suits surgery p3)
    (in-bed p1 b1) (admitted p1)
    (in-bed p2 b2) (admitted p2)
    (waiting p3)
    (free b4)
    (blocked b3)
    (= (total-cost) 0))
  (:goal (and
    (blocked b2)
    (discharged p1)
    (admitted p2)
    (admitted p3)))
  (:metric minimize (total-cost)))
