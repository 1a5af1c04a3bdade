;; Three cities, one airplane, four packages: the airplane tour
;; must be ordered so that every package is picked up before the
;; airplane reaches its destination.
(define (problem logistics-p05)
  (:domain logistics)
  (:objects
    city1 city2 city3 - city
    ap1 ap2 ap3 - airport
    l1a l2a l3a - location
    t1 t2 t3 - truck
    a1 - airplane
    p1 p2 p3 p4 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1)
    (in-city ap2 city2) (in-city l2a city2)
    (in-city ap3 city3) (in-city l3a city3)
    (at t1 l1a)
    (at t2 ap2)
    (at t3 l3a)
    (at a1 ap1)
    (at p1 l1a)
    (at p2 l2a)
    (at p3 l3a)
    (at p4 ap1)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l2a)
    (at p2 l3a)
    (at p3 l1a)
    (at p4 l3a)))
  (:metric minimize (total-cost)))
