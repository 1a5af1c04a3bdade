;; Full causal chain for one package: truck -> airplane -> truck,
;; with every vehicle first driving/flying to where it is needed.
(define (problem logistics-p03)
  (:domain logistics)
  (:objects
    city1 city2 - city
    ap1 ap2 - airport
    l1a l2a l2b - location
    t1 t2 - truck
    a1 - airplane
    p1 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1)
    (in-city ap2 city2) (in-city l2a city2) (in-city l2b city2)
    (at t1 ap1)
    (at t2 l2b)
    (at a1 ap2)
    (at p1 l1a)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l2a)))
  (:metric minimize (total-cost)))
